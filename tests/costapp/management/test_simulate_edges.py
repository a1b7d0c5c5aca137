"""``manage.py simulate`` on hostile documents: exit 0 with finite figures, or exit 2 with one
``path: message`` line per problem, never exit 1, with and without ``--json``."""

import io
import json
import re

import pytest
from django.core.management import call_command

from costapp.scenarios.services import scenario_simulate
from costapp.tco import ScenarioError, loads
from tests.tco.edge_documents import all_finite, hostile_documents, rich_document

from .test_simulate import run_simulate

PROBLEM_LINE = re.compile(r"^\S[^\n]*: \S[^\n]*$")


def simulate_in_process(path, *flags):
    """(exit code, stdout, stderr) of the command run in this process."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("simulate", str(path), *flags, stdout=out, stderr=err)
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    return code, out.getvalue(), err.getvalue()


def reject_constant(name):
    raise AssertionError(f"the JSON output holds {name}")


def check_outcome(code, stdout, stderr, text, json_mode):
    assert code in (0, 2), stderr
    if code == 0:
        assert stderr == ""
        if json_mode:
            assert all_finite(json.loads(stdout, parse_constant=reject_constant))
        else:
            assert not re.search(r"\b(nan|inf)\b", stdout, re.IGNORECASE), stdout
        return
    assert stdout == ""
    lines = stderr.splitlines()
    with pytest.raises(ScenarioError) as caught:
        scenario_simulate(document=loads(text), gpu_table_fallback=True)
    assert len(lines) == len(caught.value.errors)
    for line in lines:
        assert PROBLEM_LINE.match(line) and line.isprintable(), repr(line)


@pytest.mark.long
@pytest.mark.django_db
def test_every_hostile_document_exits_0_with_finite_figures_or_2_with_one_line_per_problem(
    tmp_path,
):
    path = tmp_path / "scenario.json"
    codes = {0: 0, 2: 0}
    for _label, document in hostile_documents():
        text = json.dumps(document).encode()
        path.write_bytes(text)
        for flags in ((), ("--json",)):
            code, stdout, stderr = simulate_in_process(path, *flags)
            check_outcome(code, stdout, stderr, text, bool(flags))
            codes[code] += 1
    assert codes[0] > 0 and codes[2] > 0  # the corpus holds both kinds


@pytest.mark.parametrize("json_mode", [False, True], ids=["table", "json"])
def test_in_a_real_process_names_with_control_characters_and_surrogates_print_on_one_line(
    tmp_path, json_mode
):
    document = rich_document()
    document["name"] = "budget\nwarning: forged line"
    document["options"][0]["name"] = "lone \ud800 surrogate"
    document["workloads"][2]["name"] = "serve\r\n\x1b[31m"
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(document))  # ASCII JSON: \n, \ud800 written as escapes
    result = run_simulate(str(path), *(["--json"] if json_mode else []))
    assert result.returncode == 0, result.stderr.decode()
    stdout = result.stdout.decode("utf-8")
    if json_mode:
        assert json.loads(stdout)["options"][0]["name"] == "lone \ud800 surrogate"
    else:
        assert stdout.splitlines()[0] == "budget\\x0awarning: forged line"
        assert "lone \\ud800 surrogate" in stdout
        assert not any(line.startswith("warning: forged") for line in stdout.splitlines())
        assert "nan" not in stdout


def test_in_a_real_process_an_overflowing_document_exits_2_naming_the_field(tmp_path):
    document = rich_document()
    document["workloads"][0]["monthly_growth"] = 1000
    document["workloads"][0]["end_month"] = 120
    document["horizon_months"] = 120
    document["options"][0]["bad\nkey"] = 1
    path = tmp_path / "overflow.json"
    path.write_text(json.dumps(document))
    for flags in ([], ["--json"]):
        result = run_simulate(str(path), *flags)
        assert result.returncode == 2, result.stderr.decode()
        assert result.stdout == b""
        assert result.stderr.decode().splitlines() == ["options[0].bad\\x0akey: unknown field"]
    del document["options"][0]["bad\nkey"]
    path.write_text(json.dumps(document))
    result = run_simulate(str(path), "--json")
    assert result.returncode == 2, result.stderr.decode()
    (line,) = result.stderr.decode().splitlines()
    assert line.startswith("workloads[0]: its demand is too large to compute")
