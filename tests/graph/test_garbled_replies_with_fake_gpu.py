"""A garbled model reply (issue 40, fault 3): a 200 whose body is not JSON, or a chat completion with no choices,
is retried like a 500 (it ended the job at once before, with a JSONDecodeError or an IndexError). When it persists,
the job fails resumably, and the message names the endpoint, what came back (truncated) and `cudamaster resume`.
The REAL graph against the scripted OpenAI-compatible server (a FAKE model), FAKE GPU results."""

from __future__ import annotations

from graph.runner import start_job
from tests.support import kernels as k
from tests.support.openai_stub import Reply

from .conftest import agent_settings
from .test_job_with_fake_gpu import script, spec

NOT_JSON = Reply(raw_body="<html><body>502 Bad Gateway</body></html>")
NO_CHOICES = Reply(raw_body='{"id": "x", "object": "chat.completion", "created": 1, "model": "coder-model", "choices": []}')


def test_a_garbled_reply_is_retried_like_a_server_error_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    script(server, "planner", NOT_JSON, Reply(k.plan()))
    script(server, "coder", NO_CHOICES, Reply(k.reply(k.fast_kernel(1.7))))
    settings = agent_settings(tmp_path, server)
    out = start_job(spec(rounds=1, debug=0), job_id="garbled", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings)
    assert out.status == "finished", out.message
    assert len(server.requests) == 4 and [c.role for c in out.llm_calls] == ["planner", "coder"]


def test_a_garbled_reply_that_persists_fails_the_job_saying_where_what_and_resume_with_fake_gpu(tmp_path, server, fake_gpu, checkpointer):
    script(server, "planner", *[NOT_JSON] * 3)
    settings = agent_settings(tmp_path, server)
    settings.retry.max_attempts = 3
    out = start_job(spec(rounds=1, debug=0), job_id="garbled2", checkpointer=checkpointer, evaluator=fake_gpu, settings=settings)
    assert out.status == "failed" and len(server.requests) == 3
    assert server.base_url in out.message  # the endpoint
    assert "502 Bad Gateway" in out.message and "not a chat completion" in out.message  # what came back
    assert "cudamaster resume garbled2" in out.message
