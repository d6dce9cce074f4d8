"""The gRPC transport of `hebbs serve`: the `hebbs.v1` services of the official SDK's protos."""
