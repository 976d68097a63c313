"""Settings: package defaults, then the AGENTLANES_CONFIG file, then AGENTLANES_<KEY>.

Every default lives once, in ``agentlanes/config/agentlanes.toml``; the model below
declares types and checks only, so no default can drift into the code.
"""

from __future__ import annotations

import os
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

DEFAULTS_FILE = Path(str(resources.files("agentlanes") / "config" / "agentlanes.toml"))


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="AGENTLANES_", extra="ignore")

    database_url: str
    redis_url: str
    redis_channel_prefix: str
    host: str
    port: int = Field(ge=1, le=65535)
    admin_token: str
    log_level: str

    conflict_mode: Literal["warn", "block"]
    heartbeat_interval_seconds: int = Field(ge=1)
    heartbeat_ttl_seconds: int = Field(ge=1)

    expiry_check_seconds: float = Field(gt=0)
    attach_refresh_seconds: float = Field(gt=0)
    liveness_flush_seconds: float = Field(gt=0, le=2)

    rate_limit_per_minute: int = Field(ge=0)
    unavailable_retry_after_seconds: int = Field(ge=1)
    max_body_bytes: int = Field(ge=1024)
    max_pattern_length: int = Field(ge=1)
    max_patterns: int = Field(ge=1)
    max_pattern_wildcards: int = Field(ge=1)
    max_brace_expansion: int = Field(ge=1)
    max_paths: int = Field(ge=1)
    max_work_summary_chars: int = Field(ge=1)
    max_message_body_chars: int = Field(ge=1)

    event_retention_count: int = Field(ge=1)
    event_retention_seconds: int = Field(ge=1)
    event_prune_seconds: float = Field(gt=0)
    event_max_conflicts: int = Field(ge=1)
    realtime_token_ttl_seconds: int = Field(ge=1)
    subscriber_queue_size: int = Field(ge=1)
    hub_catch_up_seconds: float = Field(gt=0)

    lease_default_seconds: int = Field(ge=1)
    lease_max_seconds: int = Field(ge=1)

    consensus_default_timeout_seconds: int = Field(ge=1)
    consensus_max_timeout_seconds: int = Field(ge=1)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        override = os.environ.get("AGENTLANES_CONFIG")
        if override:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=Path(override)))
        sources.append(TomlConfigSettingsSource(settings_cls, toml_file=DEFAULTS_FILE))
        return tuple(sources)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()  # type: ignore[call-arg]
