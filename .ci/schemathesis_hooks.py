"""schemathesis hooks for .ci/schemathesis.sh.

The request bodies tardy takes are test reports (XML), CSV, benchmark text
and harness JSON in many shapes: docs/openapi.yaml describes the simplest
form of each, which positive cases draw from, but no JSON Schema can say
which bodies the server refuses (a JUnit `time` that is not a number is a
warning, not a refusal; a hyperfine file has more fields than described).
So negative cases whose *body* breaks the schema are left out; negative
query parameters and headers, which the description states exactly, stay.
"""

import schemathesis


def _location(value):
    return getattr(value, "value", value)


@schemathesis.hook
def filter_case(ctx, case):
    meta = getattr(case, "meta", None)
    if meta is None:
        return True
    component = meta.components.get("body") if meta.components else None
    if component is None:
        for location, info in (meta.components or {}).items():
            if _location(location) == "body":
                component = info
    if component is not None and getattr(component.mode, "is_negative", False):
        return False
    data = getattr(getattr(meta, "phase", None), "data", None)
    if (
        _location(getattr(data, "parameter_location", None)) == "body"
        and getattr(meta.generation.mode, "is_negative", False)
    ):
        return False
    return True
