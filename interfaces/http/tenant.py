"""The tenant a REST request is served for, as a route parameter (`tenant: Tenant`): the API key is checked
and the tenant chosen in one dependency, so a route that reads or writes memories cannot have one without the
other. `X-Hebbs-Tenant` asks for a tenant; a key bound to another one is refused (403), and without the header
the key's own tenant is served (`default` for an admin key). See `HebbsService.authorize`."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header
from fastapi.requests import Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from interfaces.auth import TENANT_HEADER

TENANT_HELP = ("Whose memories: a key bound to a tenant may name only its own (another is 403); left out: the "
               "key's tenant, or `default` for an admin key.")
bearer = HTTPBearer(auto_error=False, description="An API key: `hebbs keys create` (or HEBBS_API_KEY).")


def authorized_tenant(
    request: Request,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    tenant: Annotated[str | None, Header(alias=TENANT_HEADER, description=TENANT_HELP)] = None,
) -> str:
    """The tenant the app's service (`app.state.service`) serves this request for, or the refusal."""
    return str(request.app.state.service.authorize(creds.credentials if creds else None, tenant))


Tenant = Annotated[str, Depends(authorized_tenant)]
