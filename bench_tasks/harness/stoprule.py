"""The timing loop's stop rule, the Python twin of runtime/cm_host.h (the same arithmetic, step for step).

The result reports the MEDIAN of the paired baseline/candidate ratios (of the baseline's times when it runs
alone), so the loop stops on the relative standard error of that median, estimated robustly: for n draws
with noise sigma it is sqrt(pi/2)·sigma/sqrt(n), sigma taken as IQR/1.349, which a few outliers (a call
delayed by the host) barely move. The spread of the speedup over repeated evaluations is bounded by this
error, not by how long the loop runs: five evaluations whose medians each have a relative standard
error s spread (max/min - 1) by about 2.3·s on average and by more than 5·s rarely (the range of five
normal draws), so target_rse = 0.002 keeps the issue's ≤ 1 % for five evaluations while a kernel whose
ratio varies by 3 % per pair stops after ~400 pairs (~0.1 s at 10 µs) instead of 2000. min_seconds and
min_pairs remain floors against a run of lucky first pairs; the two consecutive checked pairs are chosen
among the first min_pairs (plan.choose_check_pairs), so min_pairs also keeps them reachable.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .plan import TimingPlan

RSE_NONE = 1e9  # cannot be estimated (fewer than two values, a median that is not positive)


def quantile_sorted(s: Sequence[float], q: float) -> float:
    """The q-quantile of sorted values, linear between order statistics (as cm_host.h computes it)."""
    pos = q * float(len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - float(lo))


def median_rse(values: Sequence[float]) -> float:
    """The relative standard error of the median of `values` (robust: from the interquartile range)."""
    if len(values) < 2:
        return RSE_NONE
    s = sorted(float(v) for v in values)
    med = quantile_sorted(s, 0.5)
    if not med > 0:
        return RSE_NONE
    iqr = quantile_sorted(s, 0.75) - quantile_sorted(s, 0.25)
    return 1.2533141373155003 * (iqr / 1.3489795003921634) / math.sqrt(float(len(s))) / med


def stop_after(rule: TimingPlan, pairs: int, elapsed: float, stat: Sequence[float]) -> bool:
    """Whether the loop may stop after `pairs` pairs and `elapsed` seconds under the plan's floors, caps and
    target (`stat`: each pair's ratio, or the baseline's time when it runs alone); the median is estimated every pair up to 64, then every 8th."""
    if pairs >= rule.max_pairs or elapsed > rule.max_seconds:
        return True
    if pairs < rule.min_pairs or elapsed < rule.min_seconds:
        return False
    if pairs > 64 and pairs % 8 != 0:
        return False
    return median_rse(stat) < rule.target_rse
