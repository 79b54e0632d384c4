"""The campaign report writes its numbers as the dashboard does (issue 43, item 3): through app/fmt.py (6,450
tokens, $0.0720, P 1.500), and says what a flag choice left unset means instead of "None"."""

from __future__ import annotations

import re

from app import fmt
from app.campaigns import report
from app.campaigns.report import CampaignSummary, VariantLine


def _line(task: str, best_p: float | None, tokens: int, cost: float) -> VariantLine:
    return VariantLine(task, "fp32", "activation", f"job_{task}", "finished", best_p, 2, 1, tokens, cost, [], "memory", "memory", 1200, 2)


def _summary(choose_flags: bool | None = None) -> CampaignSummary:
    lines = [_line("relu", 1.5, 6450, 0.072), _line("gelu", None, 4800, 0.0)]
    config = {"rounds": 2, "debug": 1, "profile_mode": "filtered", "sizes": "paper", "choose_flags": choose_flags}
    per_role = {"coder": {"calls": 4, "tokens": 11250.0, "cost_usd": 0.072, "avg_tokens": 5625.0, "avg_cost_usd": 0.036}}
    return CampaignSummary("cmp_1", "relu and gelu", "finished", config, lines, per_role)


def _cells(summaries: list[CampaignSummary]) -> list[str]:
    return [cell for _, _, rows in report.all_tables(summaries) for row in rows for cell in row]


def test_report_numbers_go_through_the_one_format():
    cells = _cells([_summary()])
    assert "6,450" in cells and "11,250" in cells and "$0.0720" in cells and "1.500" in cells
    assert "5,625.0" in cells and "$0.0360" in cells
    own_way = [c for c in cells if re.fullmatch(r"\d{4,}(\.\d+)?|\d+\.\d{5}", c)]  # 6450, 0.07200, 4800.0
    assert own_way == []


def test_differences_are_signed_in_the_same_format():
    b = _summary()
    b.lines[0].tokens = 10450
    cells = _cells([_summary(), b])
    assert fmt.num(2000.0, 1, signed=True) == "+2,000.0" and "+2,000.0" in cells
    assert fmt.usd(-0.0012, signed=True) == "-$0.0012" and fmt.usd(0.5, signed=True) == "+$0.5000"


def test_flag_choice_says_what_it_means():
    texts = {flag: report.to_markdown([_summary(flag)]) for flag in (None, True, False)}
    assert all("None" not in t and "flag choice" not in t for t in texts.values())
    assert "nvcc flags the service's default" in texts[None] and "nvcc flags chosen by the compiler role" in texts[True]
