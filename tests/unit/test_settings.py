"""The settings seam (OperatorConfiguration + flags -> what the runtime, controllers and webhooks are given)
and the one tunables object."""

import dataclasses

import pytest
from dynamo_operator.api.config import DEFAULTS, parse_duration
from dynamo_operator.runtime.settings import RuntimeSettings, RuntimeTunables
from dynamo_operator.settings import settings_from_config
from dynamo_operator.tunables import ControllerTunables, Tunables, WebhookTunables


def test_a_bare_runtime_defaults_its_scope_lease_as_the_configuration_does():
    """The runtime does not read the configuration; where both state a default they must agree."""
    bare = RuntimeSettings()
    scope = DEFAULTS["namespace"]["scope"]
    assert bare.scope_lease_duration == parse_duration(scope["leaseDuration"])
    assert bare.scope_lease_renew_interval == parse_duration(scope["leaseRenewInterval"])
    assert (bare.log_level, bare.log_format) == (DEFAULTS["logging"]["level"], DEFAULTS["logging"]["format"])


def test_the_seam_passes_one_tunables_object_down():
    tunables = Tunables(runtime=RuntimeTunables(cache_sync_timeout=7.0))
    s = settings_from_config(None, tunables)
    assert s.tunables is tunables and s.runtime.tunables is tunables.runtime
    assert s.runtime.tunables.cache_sync_timeout == 7.0
    with pytest.raises(TypeError, match="unknown runtime setting"):
        settings_from_config(None, nonsense=1)


def test_every_tunable_has_a_default_and_a_reason():
    """Each field of every section is defaulted and documented on docs/settings.md."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "settings.md").read_text()
    for section in (RuntimeTunables, ControllerTunables, WebhookTunables):
        for f in dataclasses.fields(section):
            has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            assert has_default, f"{section.__name__}.{f.name} has no default"
            if not dataclasses.is_dataclass(f.type) and f.name != "model_probe":
                assert f"`{f.name}`" in page, f"docs/settings.md does not explain {section.__name__}.{f.name}"
