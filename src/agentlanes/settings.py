"""Settings: package defaults, then the AGENTLANES_CONFIG file, then AGENTLANES_<KEY>.

Every default lives once, in ``agentlanes/config/agentlanes.toml``; the model below
declares types and checks only, so no default can drift into the code.

Beside the settings, :data:`LIMITS`: the fixed sizes of what a request may carry (text
lengths, page sizes, list lengths) and of what the server keeps. They are not settings:
the OpenAPI document states them as constraints, and that document is the same for every
server (SPEC, and ``tests/e2e/test_openapi_contract.py``). Every check and every schema
reads them from here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)


@dataclass(frozen=True)
class Limits:
    """Fixed limits: one source for the checks, the OpenAPI document and the docs."""

    # What a session carries (check-in, status).
    area_chars: int = 256
    meta_bytes: int = 16_384
    status_text_chars: int = 2_000
    # Tasks, checkpoints, consensus, messages, agent configs, leases.
    task_title_chars: int = 200
    task_description_chars: int = 20_000
    task_note_chars: int = 10_000
    task_dependencies: int = 100
    checkpoint_name_chars: int = 200
    checkpoint_description_chars: int = 10_000
    checkpoint_tasks: int = 500
    consensus_action_chars: int = 200
    consensus_subject_chars: int = 500
    consensus_reason_chars: int = 10_000
    consensus_comment_chars: int = 2_000
    message_type_chars: int = 64
    message_thread_chars: int = 128
    agent_config_bytes: int = 16_384
    agent_config_keys: int = 100
    lease_resource_chars: int = 256
    project_name_chars: int = 200
    heartbeat_interval_max_seconds: int = 86_400
    heartbeat_ttl_max_seconds: int = 7 * 86_400
    # Pages and lists.
    page_size: int = 500
    page_size_default: int = 100
    page_offset: int = 10_000_000
    event_log_limit: int = 1000
    message_board_limit: int = 500
    conflict_pairs_limit: int = 10_000
    # Line-level claims: a session's edited files, the ranges kept per file (more become
    # one covering range), the largest line number and line_margin.
    edit_files: int = 100
    edit_ranges: int = 50
    edit_ranges_most: int = 100_000  # the highest edits_max_ranges a server may set
    edit_line_max: int = 10_000_000
    line_margin_max: int = 1_000
    task_board_open: int = 500
    # SPEC (Events): an event stays at most this big whatever the swarm.
    event_bytes: int = 64 * 1024
    # The longest grace a rotated key may keep (also bounds key_rotation_grace_seconds).
    key_rotation_grace_max_seconds: int = 30 * 86_400
    # What the server keeps in memory before it starts afresh.
    token_ids_kept: int = 100_000
    conflict_pairs_projects_kept: int = 256
    # Waiting for a lane (SPEC): a wait's timeout (default and most), its paths, the waits
    # one session and one project may hold, and how far back hotspots look (and are kept).
    queue_timeout_default_seconds: int = 600
    queue_timeout_max_seconds: int = 3_600
    queue_paths: int = 32
    queue_waits_per_session: int = 16
    queue_waits_per_project: int = 1_000
    release_reason_chars: int = 2_000
    hotspot_days_max: int = 30


LIMITS = Limits()

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
    # Browsers (SPEC "One agent cannot hurt another"; api/edge.py). Empty: the defaults.
    # From the environment: a comma-separated list (or a JSON array).
    allowed_hosts: Annotated[list[str], NoDecode]
    allowed_origins: Annotated[list[str], NoDecode]
    # Peers whose X-Forwarded-For / X-Forwarded-Proto are believed (addresses, networks
    # or "*"); empty: none, the peer's address is the client's.
    forwarded_allow_ips: Annotated[list[str], NoDecode]

    conflict_mode: Literal["warn", "block"]
    heartbeat_interval_seconds: int = Field(ge=1)
    heartbeat_ttl_seconds: int = Field(ge=1)
    key_rotation_grace_seconds: int = Field(ge=0, le=LIMITS.key_rotation_grace_max_seconds)

    expiry_check_seconds: float = Field(gt=0)
    attach_refresh_seconds: float = Field(gt=0)
    liveness_flush_seconds: float = Field(gt=0, le=2)

    rate_limit_per_minute: int = Field(ge=0)
    unavailable_retry_after_seconds: int = Field(ge=1)
    max_body_bytes: int = Field(ge=1024)
    max_pattern_length: int = Field(ge=1)
    max_patterns: int = Field(ge=1)
    max_pattern_wildcards: int = Field(ge=1)
    max_brace_alternatives: int = Field(ge=1)
    max_paths: int = Field(ge=1)
    max_work_summary_chars: int = Field(ge=1)
    max_message_body_chars: int = Field(ge=1)
    edits_max_ranges: int = Field(ge=1, le=LIMITS.edit_ranges_most)
    answer_max_conflicts: int = Field(ge=1, le=LIMITS.page_size)
    answer_max_files: int = Field(ge=1, le=1000)
    conflict_search_seconds: float = Field(gt=0, le=10)

    event_retention_count: int = Field(ge=1)
    event_retention_seconds: int = Field(ge=1)
    event_prune_seconds: float = Field(gt=0)
    event_max_conflicts: int = Field(ge=1)
    realtime_token_ttl_seconds: int = Field(ge=1)
    subscriber_queue_size: int = Field(ge=1)
    hub_catch_up_seconds: float = Field(gt=0)
    gc_collect_seconds: float = Field(gt=0)
    project_watch_seconds: float = Field(gt=0, le=1)
    max_sockets_per_project: int = Field(ge=1)
    socket_accepts_per_second: float = Field(gt=0)
    socket_bad_credentials_per_minute: float = Field(gt=0)
    max_mcp_sessions_per_project: int = Field(ge=1)
    message_retention_days: float = Field(gt=0)
    job_shutdown_grace_seconds: float = Field(ge=0, le=60)

    lease_default_seconds: int = Field(ge=1)
    lease_max_seconds: int = Field(ge=1)

    consensus_default_timeout_seconds: int = Field(ge=1)
    consensus_max_timeout_seconds: int = Field(ge=1)

    news_max_items: int = Field(ge=1, le=1000)
    news_text_max_chars: int = Field(ge=16, le=LIMITS.task_description_chars)
    news_recent_events: int = Field(ge=1)
    news_recent_bytes: int = Field(ge=1)

    # Waiting for a lane (SPEC): a wait older than this counts one urgency level higher.
    queue_age_boost_seconds: float = Field(ge=0)

    @field_validator("forwarded_allow_ips")
    @classmethod
    def _addresses(cls, value: list[str]) -> list[str]:
        import ipaddress

        for entry in value:
            if entry == "*":
                continue
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(f"{entry!r} is not an IP address, a network or *") from None
        return value

    @field_validator("allowed_hosts", "allowed_origins", "forwarded_allow_ips", mode="before")
    @classmethod
    def _split_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):  # a JSON array, unless it is "[::1],localhost"
                import json

                try:
                    return json.loads(text)
                except ValueError:
                    pass
            return [part.strip() for part in text.split(",") if part.strip()]
        return value

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
    return Settings()
