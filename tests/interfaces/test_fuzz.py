"""A property-based fuzz of the OpenAPI schema (schemathesis + hypothesis) against the real server: no
generated request, valid or not, gets a 5xx. Examples per operation are few so the test stays fast."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.interfaces.conftest import Served

pytestmark = pytest.mark.slow

EXAMPLES = 12
# Indexing reads the server's own file system: a generated path could be any folder on this machine.
SKIPPED = {"/v1/index", "/v1/upload"}


def test_no_generated_request_gets_a_server_error(served: Served) -> None:
    schema = schemathesis.openapi.from_url(f"{served.rest}/openapi.json")
    operations = [r.ok() for r in schema.get_all_operations()]
    fuzzed = [op for op in operations if op.path not in SKIPPED]
    assert len(fuzzed) >= 15
    failures: list[str] = []
    headers = served.headers()

    for operation in fuzzed:
        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy(), with_key=st.booleans())
        def fuzz(case: schemathesis.Case, with_key: bool) -> None:
            response = case.call(base_url=served.rest, headers=headers if with_key else {}, timeout=60)
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text}")
                pytest.fail(failures[-1])
            if response.status_code >= 400:
                assert list(response.json()) == ["error"], response.text

        fuzz()
    assert not failures, failures[:3]
