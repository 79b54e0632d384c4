"""One LLM call for one role: through an OpenAI-compatible endpoint, a person (manual mode), or a
file of recorded responses (replay mode). Every call returns a record for the job's ledger:
role, model, tokens (input, output, reasoning, cached), latency, cost, and the response text
(which is what replay feeds back).

Transient endpoint errors (timeouts, connection errors, 429, 5xx) are raised as they are and retried
by the graph's RetryPolicy on the LLM nodes (see builder.py); the client itself does not retry.
A refused key (401/403) and other client errors raise errors that are never retried.

A paid call is recorded before it is sent (`call_ledger`): the ledger stores it as `sent` (with the
prompt's exact input tokens and, as its output, the `max_tokens` it is sent with under a spending cap:
what it may cost at most), and the finished record (same `send_id`) makes it `paid`. A call
in flight when the process dies thus stays on record: the service marks it `lost_in_flight` when the
job resumes. The ledger also gates sending: once the job is asked to stop, it refuses the call and
the node drains (GraphDrained: no error recorded, the node runs again on resume).

Under a spending cap (graph/spending.py) a call's prompt is counted exactly before it is sent
(`prompt_tokens`) and its answer bounded with `max_tokens`, so that the call cannot pass the cap; a call
that cannot fit is not sent (spending.CapRefused).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import openai
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.errors import GraphDrained
from langgraph.types import interrupt
from pydantic import BaseModel

from settings import AgentSettings, ResolvedRole

from . import spending
from .contract import LlmCall, Question

if TYPE_CHECKING:
    from .deps import Deps

TRANSIENT_LLM_ERRORS: tuple[type[BaseException], ...] = (
    openai.APITimeoutError,
    openai.APIConnectionError,
    openai.RateLimitError,
    openai.InternalServerError,
    httpx.TimeoutException,
    httpx.TransportError,
)


class LlmError(RuntimeError):
    """An LLM call failed in a way that retrying will not fix; the message says what to do."""


class GarbledReply(RuntimeError):
    """The endpoint answered 200 with something that is not a chat completion (not JSON, no choices): retried
    like a 500. The message names the endpoint and what came back (truncated)."""


TRANSIENT_LLM_ERRORS = (*TRANSIENT_LLM_ERRORS, GarbledReply)


class EndpointRefused(LlmError):
    pass


class ReplayExhausted(LlmError):
    pass


# Stores a call about to be sent; returns False when no new call may start (the job is stopping).
CallLedger = Callable[[dict[str, Any]], bool]
_ledger: ContextVar[CallLedger | None] = ContextVar("cudamaster_llm_call_ledger", default=None)
# What a chat request adds to its messages' text (OpenAI's published accounting: 3 tokens per message,
# 3 to prime the reply); counted on top of the text so the count is never below what the endpoint bills.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_REPLY = 3


@contextmanager
def call_ledger(ledger: CallLedger, spent: spending.RecordedSpending | None = None) -> Iterator[None]:
    """Within this block (and the graph's node threads it starts), paid LLM calls go through `ledger`, and
    the spending cap also counts what `spent` says the job's ledger holds (calls lost in flight included)."""
    token = _ledger.set(ledger)
    try:
        with spending.recorded(spent):
            yield
    finally:
        _ledger.reset(token)


def prompt_tokens(system: str, user: str) -> int:
    """The input tokens of a request with these two messages: tiktoken's exact count of each text plus the
    chat format's per-message tokens. Offline, without the encoding, one token per UTF-8 byte (an upper
    bound: no token is shorter than a byte), so a cap is never passed for want of the tokenizer."""
    from profiling.tokens import count_tokens

    total = 2 * TOKENS_PER_MESSAGE + TOKENS_PER_REPLY
    for text in (system, user):
        counted = count_tokens(text)
        total += counted.tokens if counted.exact else len(text.encode())
    return total


def _record_sent(record: dict[str, Any], input_tokens: int, max_tokens: int | None, settings: AgentSettings) -> None:
    ledger = _ledger.get()
    if ledger is None:
        return
    reserved = max_tokens or 0  # under a cap: the most the answer may cost, counted while it is unanswered
    cost, priced = cost_usd(settings, record["model"], input_tokens, reserved, 0)
    sent = {
        **record,
        "status": "sent",
        "input_tokens": input_tokens,
        "output_tokens": reserved,
        "cost_usd": cost,
        "priced": priced,
        "mode": "endpoint",
    }
    if not ledger(sent):
        raise GraphDrained(f"stop requested before the {record['role']} call was sent")


def _reached(exc: BaseException) -> tuple[bool, bool]:
    """(the request reached the endpoint, the endpoint may have generated an answer) for a call that raised."""
    causes: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and len(causes) < 10:
        causes.append(seen)
        seen = seen.__cause__ or seen.__context__
    if any(isinstance(c, (httpx.ConnectError, httpx.ConnectTimeout, ConnectionRefusedError)) for c in causes):
        return False, False  # never connected
    if isinstance(exc, (GarbledReply, openai.APITimeoutError, httpx.TimeoutException)):
        return True, True  # answered unreadably, or not in time: it may have generated (and billed) the answer
    if isinstance(exc, (openai.APIConnectionError, httpx.TransportError)):
        return True, True  # cut off mid-answer (a truncated body)
    if isinstance(exc, openai.InternalServerError):
        return True, False  # took the prompt, answered an error
    return False, False  # refused before any work (4xx, 429), or never sent


def _record_failed(record: dict[str, Any], exc: BaseException, input_tokens: int, max_tokens: int | None, settings: AgentSettings) -> None:
    """The call's `failed` record, charged an estimate when it reached the endpoint (spending.failed_charge)."""
    ledger = _ledger.get()
    if ledger is None:
        return
    reached, generated = _reached(exc)
    charged_in, charged_out = spending.failed_charge(input_tokens, max_tokens, reached=reached, may_have_generated=generated)
    cost, priced = cost_usd(settings, record["model"], charged_in, charged_out, 0)
    why = f"{type(exc).__name__}: {exc}"[:400]
    if charged_in or charged_out:
        why += f" [charged an estimate: {charged_in} prompt tokens + {charged_out} output tokens]"
    failed = {**record, "status": "failed", "message": why, "mode": "endpoint", "input_tokens": charged_in, "output_tokens": charged_out}
    ledger(failed | {"cost_usd": cost, "priced": priced})


def is_transient(exc: BaseException) -> bool:
    return isinstance(exc, TRANSIENT_LLM_ERRORS)


def cost_usd(settings: AgentSettings, model: str, input_tokens: int, output_tokens: int, cached_tokens: int) -> tuple[float, bool]:
    price = settings.price(model)
    if price is None:
        return 0.0, False
    cached_price = price.input if price.cached_input is None else price.cached_input
    cost = ((input_tokens - cached_tokens) * price.input + cached_tokens * cached_price + output_tokens * price.output) / 1e6
    return round(cost, 8), True


class _BodyRecorder(httpx.BaseTransport):
    """An HTTP transport that keeps the last response body (what came back, for a reply that cannot be read)."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.last: bytes | None = None

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        response.read()
        self.last = response.content
        return response

    def close(self) -> None:
        self.inner.close()


def _chat_model(r: ResolvedRole, max_tokens: int | None = None, http_client: httpx.Client | None = None):
    from langchain_openai import ChatOpenAI

    kwargs: dict[str, Any] = dict(
        model=r.model,
        base_url=r.base_url,
        timeout=r.timeout_s,
        max_retries=0,
        api_key=r.api_key.get_secret_value() if r.api_key else "unset",
    )
    if http_client is not None:
        kwargs["http_client"] = http_client
    if r.reasoning_effort:
        kwargs["reasoning_effort"] = r.reasoning_effort
    if r.temperature is not None:
        kwargs["temperature"] = r.temperature
    if max_tokens is not None:
        kwargs["max_tokens"] = max_tokens  # sent as max_completion_tokens (reasoning tokens included)
    return ChatOpenAI(**kwargs)


def _usage(message: Any) -> dict[str, int]:
    u = getattr(message, "usage_metadata", None) or {}
    return {
        "input_tokens": int(u.get("input_tokens") or 0),
        "output_tokens": int(u.get("output_tokens") or 0),
        "reasoning_tokens": int((u.get("output_token_details") or {}).get("reasoning") or 0),
        "cached_tokens": int((u.get("input_token_details") or {}).get("cache_read") or 0),
    }


def _call_endpoint(
    r: ResolvedRole, system: str, user: str, schema: type[BaseModel] | None, max_tokens: int | None = None
) -> tuple[str, dict[str, int]]:
    recorder = _BodyRecorder()
    with httpx.Client(transport=recorder) as client:
        try:
            return _invoke(_chat_model(r, max_tokens, client), r, system, user, schema)
        except (ValueError, LookupError, TypeError, openai.APIResponseValidationError) as exc:
            if recorder.last is None:  # nothing came back: not a reply that could not be read
                raise
            raise GarbledReply(
                f"the endpoint {r.base_url or 'api.openai.com'} answered the {r.role} call to {r.model!r} with a reply "
                f"that is not a chat completion ({type(exc).__name__}: {str(exc)[:120]}); it sent: {recorder.last[:300]!r}"
            ) from None


def _invoke(llm: Any, r: ResolvedRole, system: str, user: str, schema: type[BaseModel] | None) -> tuple[str, dict[str, int]]:
    messages = [SystemMessage(system), HumanMessage(user)]
    try:
        if schema is not None and r.structured_output != "none":
            out = llm.with_structured_output(schema, method=r.structured_output, include_raw=True).invoke(messages)
            raw, parsed = out["raw"], out.get("parsed")
            text = json.dumps(parsed.model_dump()) if parsed is not None else str(raw.content or "")
            return text, _usage(raw)
        reply = llm.invoke(messages)
    except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
        raise EndpointRefused(
            f"the endpoint {r.base_url or 'api.openai.com'} refused the key for the {r.role} role "
            f"(HTTP {exc.status_code}: {_error_text(exc)}). Set CUDAMASTER_AGENT__API_KEY or "
            f"CUDAMASTER_AGENT__ROLES__{r.role.upper()}__API_KEY, then resume the job."
        ) from None
    except openai.NotFoundError as exc:
        raise LlmError(
            f"the endpoint has no model {r.model!r} for the {r.role} role (HTTP 404: {_error_text(exc)}); "
            f"set CUDAMASTER_AGENT__ROLES__{r.role.upper()}__MODEL, then resume the job."
        ) from None
    except openai.BadRequestError as exc:
        raise LlmError(
            f"the endpoint rejected the {r.role} request to {r.model!r} (HTTP 400: {_error_text(exc)}); "
            "if it does not support the structured-output method, set "
            f"CUDAMASTER_AGENT__ROLES__{r.role.upper()}__STRUCTURED_OUTPUT (json_mode or none)."
        ) from None
    content = (
        reply.content
        if isinstance(reply.content, str)
        else "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in reply.content)
    )
    return content, _usage(reply)


def _error_text(exc: openai.APIStatusError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    return str(body.get("message") or exc.message)[:300]


@cache
def _replay_responses(path: str) -> tuple[dict[str, Any], ...]:
    return tuple(load_replay_file(Path(path)))


def load_replay_file(path: Path) -> list[dict[str, Any]]:
    """Recorded responses, in order: JSON lines (or a JSON list) of {"role": ..., "response": ...}."""
    text = Path(path).read_text()
    try:
        data = json.loads(text)
        records = data if isinstance(data, list) else data.get("responses", [])
    except json.JSONDecodeError:
        records = [json.loads(line) for line in text.splitlines() if line.strip()]
    for i, rec in enumerate(records):
        if not isinstance(rec, dict) or "role" not in rec or "response" not in rec:
            raise ValueError(f"{path}: record {i + 1} needs 'role' and 'response'")
    return records


def ask(
    state: dict[str, Any], role: str, system: str, user: str, deps: Deps, schema: type[BaseModel] | None = None
) -> tuple[str, dict[str, Any]]:
    """Ask `role`; return (response text, call record: a contract.LlmCall as JSON). May pause the job
    (manual mode) with a contract.Question whose id is the call's id."""
    spec, settings = deps.spec, deps.settings
    calls = state.get("llm_calls", [])
    resolved = settings.role(role, spec.model_for(role))
    record = LlmCall(
        call_id=f"{state['job_id']}:llm{len(calls)}",
        job_id=state["job_id"],
        round=state.get("round", 0),
        debug_step=state.get("debug_step", 0),
        role=role,
        model=resolved.model,
    )
    if spec.replay_file:
        text = _replayed(record, spec.replay_file, calls)
    elif spec.manual or not resolved.has_endpoint:
        text = _asked_in_person(record, system, user, manual=spec.manual)
    else:
        text, record = _sent_to_endpoint(record, resolved, system, user, schema, deps, calls)
    record.response = text
    return text, record.model_dump(mode="json")


def _replayed(record: LlmCall, replay_file: str, calls: list[dict[str, Any]]) -> str:
    """The replay file's next response for the call's role (the role's calls so far say which one)."""
    nth_for_role = sum(1 for c in calls if c["role"] == record.role)
    recorded = [r for r in _replay_responses(replay_file) if r["role"] == record.role]
    if nth_for_role >= len(recorded):
        raise ReplayExhausted(
            f"the replay file {replay_file} has {len(recorded)} {record.role} responses; the job asked for response {nth_for_role + 1}"
        )
    record.mode, record.model = "replay", f"replay:{recorded[nth_for_role].get('model', record.model)}"
    return str(recorded[nth_for_role]["response"])


def _asked_in_person(record: LlmCall, system: str, user: str, *, manual: bool) -> str:
    """A person's answer: pauses the job with the call as a contract.Question (manual mode, or no endpoint)."""
    why = (
        "the job runs in manual mode"
        if manual
        else ("no LLM endpoint is configured (CUDAMASTER_AGENT__BASE_URL / CUDAMASTER_AGENT__API_KEY)")
    )
    question = Question(
        question_id=record.call_id,
        role=record.role,
        round=record.round,
        debug_step=record.debug_step,
        question=f"Answer as the {record.role} ({why}).",
        system=system,
        prompt=user,
    )
    answer = interrupt(question.model_dump(mode="json"))
    record.mode, record.model = "manual", "manual"
    return answer_text(answer, question)


def _sent_to_endpoint(
    record: LlmCall,
    resolved: ResolvedRole,
    system: str,
    user: str,
    schema: type[BaseModel] | None,
    deps: Deps,
    calls: list[dict[str, Any]],
) -> tuple[str, LlmCall]:
    """The endpoint's answer, a paid call: bounded by the spending cap (raises spending.CapRefused when it
    cannot fit), recorded as sent before it goes out (and as failed if it raises); returns the text and the
    record with its tokens, latency and cost."""
    spec, settings = deps.spec, deps.settings
    input_tokens = prompt_tokens(system, user)
    max_tokens = spending.allowance(spec, settings, resolved.model, input_tokens, calls)  # raises CapRefused
    record.send_id, record.status = uuid.uuid4().hex, "paid"
    _record_sent(record.model_dump(mode="json"), input_tokens, max_tokens, settings)
    started = time.monotonic()
    try:
        text, usage = _call_endpoint(resolved, system, user, schema, max_tokens)
    except Exception as exc:
        _record_failed(record.model_dump(mode="json"), exc, input_tokens, max_tokens, settings)
        raise
    record = record.model_copy(update=usage)
    record.latency_s = round(time.monotonic() - started, 3)
    record.cost_usd, record.priced = cost_usd(
        settings, resolved.model, usage["input_tokens"], usage["output_tokens"], usage["cached_tokens"]
    )
    record.mode = "endpoint"
    return text, record


class StaleAnswer(LlmError):
    """An answer reached a question it was not given for (graph.runner refuses these before resuming)."""


def answer_text(answer: Any, question: Question) -> str:
    """The text of the answer a paused job was resumed with; an Answer must name this question."""
    if isinstance(answer, dict) and "question_id" in answer:
        if answer["question_id"] != question.question_id:
            raise StaleAnswer(
                f"the answer given for question {answer['question_id']} reached question "
                f"{question.question_id} ({question.role}); answer the pending question again"
            )
        return str(answer.get("text", ""))
    return str(answer)
