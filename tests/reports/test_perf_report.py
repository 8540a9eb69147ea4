"""Perf templates: header derivation, field rendering, units and modifiers."""

import dataclasses

from benchdnn_py.reports import perf_report
from benchdnn_py.reports.perf_report import PerfRecord, parse_template


def record(times=(2.0, 1.0, 3.0)):
    return PerfRecord({"engine": "cpu", "impl": "x:avx2", "name": '"n"', "prb": "--conv y",
                       "desc": "y"}, ops=4e9, ibytes=1000, obytes=500, times_ms=list(times),
                      create_ms=(0.25, 1.5), idx=7, mb=1)


def test_default_template_header_and_line():
    template = parse_template("def").resolve("")
    assert perf_report.header(template) == (
        "perf,engine,impl,name,prb,Gops,max_ctime,min_time,min_Gflops,avg_time,avg_Gflops")
    assert perf_report.render(template, record()) == (
        'perf,cpu,x:avx2,"n",--conv y,4,1.75,1,4000,2,2000')


def test_csv_template_columns_match_header():
    template = parse_template("csv").resolve("%dir%,%sdt%")
    assert perf_report.header(template).count(",") == template.count(",")


def test_modifiers_units_and_bandwidth():
    rec = record()
    assert perf_report.render("%+time%|%0time%|%-time%|%time%", rec) == "3|2|1|1"
    assert perf_report.render("%Kops%|%Mflops%|%bw%", rec) == "4e+06|4e+06|1.5e+06"
    assert perf_report.render("%cpdtime%|%cptime%|%idx%|%mb%", rec) == "0.25|1.5|7|1"


def test_the_median_and_the_interquartile_range():
    # one disturbed run (40 ms) moves the mean but neither the median nor the IQR much
    rec = record((1.0, 2.0, 3.0, 4.0, 40.0))
    assert perf_report.render("%=time%|%0time%|%iqr%|%=Gflops%", rec) == "3|10|2|1333.33"
    assert perf_report.header("%=time%,%iqr%,%=Gflops%") == "med_time,iqr,med_Gflops"
    assert perf_report.render("%=time%|%iqr%", record((5.0,))) == "5|0"
    assert perf_report.render("%=time%", record((1.0, 4.0))) == "2.5"
    assert "iqr" in perf_report.COMMON_FIELDS


def test_custom_template_keeps_literal_text():
    assert perf_report.render("t=%-time% ms", record()) == "t=1 ms"


def test_eff_is_the_share_of_the_measured_limit(monkeypatch):
    limits = {("f32", 0): 8e12, (perf_report.BANDWIDTH, 0): 3e6, ("f32", 1): 4e12}
    monkeypatch.setattr(perf_report, "machine_limit", lambda *key: limits[key])
    rec = record()                      # 4e9 ops, 1500 bytes; min 1 ms, avg 2 ms
    assert perf_report.render("%-eff%|%0eff%|%eff%", rec) == "50|25|50"
    bw = PerfRecord(rec.text, rec.ops, rec.ibytes, rec.obytes, rec.times_ms, rec.create_ms,
                    rec.idx, rec.mb, limit=perf_report.BANDWIDTH)
    assert perf_report.render("%-eff%", bw) == "50"     # 1.5e6 B/s of 3e6
    one = dataclasses.replace(rec, threads=1)    # --threads=1: the one-thread limit
    assert perf_report.render("%-eff%", one) == "100"


def test_eff_without_a_limit_is_zero_not_a_division_error(monkeypatch):
    monkeypatch.setattr(perf_report, "machine_limit", lambda limit, threads: 0.0)
    assert perf_report.render("%-eff%", record()) == "0"
