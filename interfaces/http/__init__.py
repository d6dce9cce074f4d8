"""The REST transport of `hebbs serve`: a FastAPI app over `interfaces.service.HebbsService`."""

from interfaces.http.app import create_app

__all__ = ["create_app"]
