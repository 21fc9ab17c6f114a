"""Request bodies of the JSON API (pydantic models; lengths bounded)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from parakit.annotate.tasks import CLASSIFY


class SaveBody(BaseModel):
    label: str | None = None
    revision: int = 0
    submit: bool = False
    rewrite1: str | None = Field(default=None, max_length=10000)
    rewrite2: str | None = Field(default=None, max_length=10000)
    unsure: bool = False
    comment: str | None = Field(default=None, max_length=10000)
    task: str = CLASSIFY


class SuggestionRef(BaseModel):
    """The suggestion the annotator accepted before adjusting its spans (a claim the server
    checks: the stored provenance is decided by the server from the spans; a client's
    ``adjusted`` is ignored)."""

    rank: int


class SpanBody(BaseModel):
    begin1: int
    end1: int
    begin2: int
    end2: int
    suggestion: SuggestionRef | None = None


class FinishBody(BaseModel):
    empty: bool = False


class UserBody(BaseModel):
    name: str = Field(min_length=1, max_length=100)
    password: str = Field(min_length=8, max_length=1000)
    role: str = "annotator"
    projects: list[int] = []


class AssignBody(BaseModel):
    task: str = CLASSIFY
    mode: str = "single"
    annotators: list[str] | None = None
    batch: str = "default"
    seed: int = 0


class ResolveBody(BaseModel):
    label: str


class MembersBody(BaseModel):
    annotators: list[str]
    remove: bool = False


class SkipBody(BaseModel):
    task: str = CLASSIFY


class ActiveBody(BaseModel):
    active: bool


class PasswordBody(BaseModel):
    password: str = Field(min_length=8, max_length=1000)


class ScreenBody(BaseModel):
    accept: bool


class SettingsBody(BaseModel):
    guidelines: str | None = Field(default=None, max_length=100_000)
    descriptions: dict[str, str] | None = None
    question: str | None = Field(default=None, max_length=1000)
    archived: bool | None = None
