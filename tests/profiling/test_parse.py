import pytest

from profiling import metrics as m
from profiling.errors import NoKernelsProfiledError, ReportFormatError
from profiling.parse import normalize, parse_details, parse_number, parse_raw, parse_report
from profiling.report import ProfileReport

from .helpers import fixture_text


@pytest.mark.parametrize(
    "text, value",
    [
        ("3,199,183,616.99", 3199183616.99),
        ("231,040", 231040.0),
        ("70.72", 70.72),
        ("0", 0.0),
        ("1.5e+03", 1500.0),
        ("no data", None),
        ("n/a", None),
        ("", None),
        ("NVIDIA H200", None),
        ("1,5", None),
    ],
)
def test_parse_number(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize(
    "value, unit, expected",
    [
        (231.04, "usecond", (231040.0, "nsecond")),
        (231.04, "us", (231040.0, "nsecond")),
        (2.0, "msecond", (2e6, "nsecond")),
        (3.4, "Tbyte/s", (3.4e12, "byte/second")),
        (3.0, "Gbyte/second", (3e9, "byte/second")),
        (5.0, "Kbyte", (5e3, "byte")),
        (70.7, "%", (70.7, "%")),
        (16.0, "register/thread", (16.0, "register/thread")),
    ],
)
def test_normalize_scaled_units(value, unit, expected):
    got = normalize(value, unit)
    assert got[1] == expected[1] and got[0] == pytest.approx(expected[0])


def test_raw_page_single_kernel_skips_prof_lines_and_reads_separators():
    (k,) = parse_raw(fixture_text("synthetic_saxpy_raw.csv"))
    assert k.name == "saxpy_fp32" and k.block == (256, 1, 1) and k.grid == (262144, 1, 1) and k.id == 0
    assert k.value(m.DRAM_THROUGHPUT) == 70.72 and k.value(m.SM_THROUGHPUT) == 34.85
    assert k.value(m.DRAM_BYTES_PER_S) == 3399836160000.0
    assert k.duration_ns == 231040.0 and k.metrics[m.DURATION].unit == "nsecond"
    assert k.metrics["device__attribute_display_name"].value is None
    assert k.metrics["device__attribute_display_name"].text == "NVIDIA H200"
    assert "Kernel Name" not in k.metrics and "Block Size" not in k.metrics


def test_raw_page_no_data_and_na_are_none_and_trailing_warning_is_skipped():
    (k,) = parse_raw(fixture_text("synthetic_chase_raw.csv"))
    assert k.value(m.L2_HIT_RATE) is None and k.metrics[m.L2_HIT_RATE].text is None
    assert k.value(m.SM_THROUGHPUT) == 0.8 and k.duration_ns == 4213216.0


def test_raw_page_several_kernels_and_weighted_summary():
    text = fixture_text("synthetic_two_kernels_raw.csv")
    kernels = parse_raw(text)
    assert [k.name for k in kernels] == ["gemm_tile_kernel(const float *, const float *, float *, int)", "bias_epilogue"]
    assert kernels[0].block == (16, 16, 1) and kernels[0].grid == (33, 16, 1)
    report = ProfileReport.from_kernels(kernels, raw_csv=text)
    s = report.summary
    assert s[m.DURATION].value == pytest.approx(1_000_000.0)  # durations add up
    assert s[m.SM_THROUGHPUT].value == pytest.approx(0.9 * 80 + 0.1 * 10)  # duration-weighted
    assert s[m.DRAM_THROUGHPUT].value == pytest.approx(0.9 * 10 + 0.1 * 20)
    assert s[m.DRAM_BYTES_PER_S].value == pytest.approx(0.9 * 412e9 + 0.1 * 900e9)
    assert report.duration_ns == pytest.approx(1e6)


def test_details_page_maps_labels_to_raw_names_and_keeps_rules():
    (k,) = parse_details(fixture_text("synthetic_saxpy_details.csv"))
    assert k.name == "saxpy_fp32" and k.grid == (262144, 1, 1)
    assert k.value(m.MEMORY_THROUGHPUT_PCT) == 70.72  # "Memory Throughput" in %
    assert k.value(m.DRAM_BYTES_PER_S) == pytest.approx(3.4e12)  # "Memory Throughput" in Tbyte/s
    assert k.value(m.SM_THROUGHPUT) == 34.85 and k.value(m.REGISTERS_PER_THREAD) == 16
    assert k.duration_ns == pytest.approx(231040.0)
    assert k.value("Launch Statistics/Grid Size") == 262144
    assert any(r.startswith("SOLBottleneck") for r in k.rules)


def test_parse_report_detects_the_page():
    assert parse_report(fixture_text("synthetic_saxpy_details.csv"))[0].value(m.SM_THROUGHPUT) == 34.85
    assert parse_report(fixture_text("synthetic_saxpy_raw.csv"))[0].value(m.SM_THROUGHPUT) == 34.85


def test_no_kernels_and_garbage_give_clear_errors():
    with pytest.raises(NoKernelsProfiledError, match="no kernel"):
        parse_raw(fixture_text("synthetic_no_kernels.txt"))
    with pytest.raises(ReportFormatError, match="--csv --page raw"):
        parse_raw("hello\nworld\n")
    header_only = "\n".join(fixture_text("synthetic_fma_raw.csv").splitlines()[:2])
    with pytest.raises(NoKernelsProfiledError):
        parse_raw(header_only)


def test_report_round_trips_through_json():
    text = fixture_text("synthetic_saxpy_raw.csv")
    report = ProfileReport.from_kernels(parse_raw(text), raw_csv=text, task="t", precision="fp32", params={"N": 4})
    again = ProfileReport.model_validate_json(report.model_dump_json())
    assert again.bottleneck == report.bottleneck and again.summary == report.summary and again.kernels == report.kernels
