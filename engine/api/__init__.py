"""The engine's request model: transport-free requests (`parse` validates) and responses (`to_dict`).

Every interface (CLI, REST, gRPC, workbench, notebooks) builds a request here and hands it to
`MemoryEngine.handle`, so each input is validated once, the same way, whichever way it arrived.
"""

from engine.api.requests import (
    REQUESTS,
    AddEdgesRequest,
    ForgetRequest,
    GetRequest,
    IngestRequest,
    ListRequest,
    NeighbourhoodRequest,
    NewEdge,
    PrimeRequest,
    RecallRequest,
    RememberManyRequest,
    RememberRequest,
    Request,
    RescoreRequest,
    ReviseRequest,
    StatsRequest,
    build_request,
    parse_edge_spec,
    parse_request,
)
from engine.api.responses import (
    EdgesResponse,
    ForgetResponse,
    ListResponse,
    MemoriesResponse,
    NeighbourhoodResponse,
    NeighbourNode,
    RecallResponse,
    StatsResponse,
)

__all__ = [
    "REQUESTS",
    "AddEdgesRequest",
    "EdgesResponse",
    "ForgetRequest",
    "ForgetResponse",
    "GetRequest",
    "IngestRequest",
    "ListRequest",
    "ListResponse",
    "MemoriesResponse",
    "NeighbourhoodRequest",
    "NeighbourhoodResponse",
    "NeighbourNode",
    "NewEdge",
    "PrimeRequest",
    "RecallRequest",
    "RecallResponse",
    "RememberManyRequest",
    "RememberRequest",
    "Request",
    "RescoreRequest",
    "ReviseRequest",
    "StatsRequest",
    "StatsResponse",
    "build_request",
    "parse_edge_spec",
    "parse_request",
]
