"""The GPUs of late 2026 (issue 41): the shared GPU table with its FP4 column and new rows, and
every GPU name of the shipped SkyPilot files settled by an alias.

Pinned on the shipped catalog, loaded once per test database (``catalog``)."""

import re
from datetime import date
from decimal import Decimal

import pytest
from django.urls import reverse

from accounts.roles import CATALOG_EDITOR, VIEWER
from hardware.data_files import DATA_DIR, SKYPILOT_DIR
from hardware.gpu_table import GpuTableError, engine_figures, read_gpu_table
from hardware.models import GpuModel, InstanceOffer, InstancePrice
from hardware.sources.aliases import read_aliases
from hardware.sources.common import RowRejected, read_csv
from tests.api_crud import role_clients
from tests.factories import UserFactory

from .test_catalog_truth import FIGURES

LATE_2026_GPUS = {"gb300", "mi350x", "rtx-pro-6000-server", "h200-nvl", "a800-pcie-80gb"}
FP4 = {
    "b200": Decimal(9000),
    "b300": Decimal(14000),
    "gb200": Decimal(10000),
    "gb300": Decimal(15000),
    "mi355x": Decimal("10066.3"),
    "mi350x": Decimal("9227.5"),
    "rtx-pro-6000-server": Decimal(2000),
    "rtx-pro-6000": Decimal(2000),
    "rtx-5090": Decimal(1676),
}


def test_every_row_of_the_gpu_table_loads_with_its_fp4_figure_where_given(catalog):
    rows = read_gpu_table()
    assert f"gpus.csv: {len(rows)} rows read, {len(rows)} created" in catalog
    stored = {gpu.slug: gpu for gpu in GpuModel.objects.all()}
    assert stored.keys() == {row.slug for row in rows} >= LATE_2026_GPUS
    assert {
        slug: gpu.fp4_dense_tflops for slug, gpu in stored.items() if gpu.fp4_dense_tflops
    } == FP4
    # Hopper and older have no FP4: empty, not zero
    assert stored["h100-sxm"].fp4_dense_tflops is None
    assert stored["h200-nvl"].fp4_dense_tflops is None
    gb300 = stored["gb300"]
    assert (gb300.memory_gb, gb300.bf16_dense_tflops, gb300.tdp_w) == (Decimal(288), 2500, 1400)
    assert stored["b300"].bf16_dense_tflops == Decimal(2250) and stored["b300"].tdp_w == 1100


def test_every_fp4_figure_and_every_figure_of_the_new_gpus_has_its_source():
    rows = {row.slug: row for row in read_gpu_table()}
    _, records = read_csv(DATA_DIR / "gpu_specs_sources.csv", ("slug", "figure", "value", "source"))
    sources = {(r["slug"], r["figure"]): r["value"] for _, r in records}
    for slug, row in rows.items():
        if row.fp4_dense_tflops is not None:
            assert Decimal(sources[(slug, "fp4_dense_tflops")]) == row.fp4_dense_tflops, slug
    for slug in LATE_2026_GPUS:
        for figure in FIGURES:
            value = getattr(rows[slug], figure)
            if value is None:
                assert (slug, figure) not in sources, (slug, figure)
            elif isinstance(value, date):
                assert date.fromisoformat(sources[(slug, figure)]) == value, (slug, figure)
            else:
                assert Decimal(sources[(slug, figure)]) == value, (slug, figure)


def test_the_engine_never_reads_fp4():
    b200 = next(row for row in read_gpu_table() if row.slug == "b200")
    assert "fp4_dense_tflops" not in engine_figures(b200)


def test_a_gpu_table_with_a_bad_fp4_figure_names_its_line_and_column(tmp_path):
    table = (DATA_DIR / "gpus.csv").read_text().splitlines()
    assert table[0].split(",")[9] == "fp4_dense_tflops"
    cells = table[1].split(",")
    cells[9] = "lots"
    path = tmp_path / "gpus.csv"
    path.write_text("\n".join([table[0], ",".join(cells)]) + "\n")
    with pytest.raises(GpuTableError, match=r"gpus.csv:2: fp4_dense_tflops 'lots' is not a number"):
        read_gpu_table(path)
    cells[9] = "-1"
    path.write_text("\n".join([table[0], ",".join(cells)]) + "\n")
    with pytest.raises(GpuTableError, match="fp4_dense_tflops must not be negative"):
        read_gpu_table(path)


def test_no_row_of_the_shipped_skypilot_files_is_rejected_for_an_unknown_gpu_name(catalog):
    names = sorted(path.name for path in SKYPILOT_DIR.glob("*.csv"))
    for name in names:
        line = re.search(rf"^skypilot-v8/{re.escape(name)}: .*$", catalog, re.MULTILINE)
        assert line is not None, name
        assert "unknown GPU name" not in line.group(0), line.group(0)
    assert not re.search(r"unknown GPU name '[^']*' at skypilot-v8/", catalog)


def test_cudo_a800_loads_as_the_80_gb_pcie_card(catalog):
    offers = InstanceOffer.objects.filter(provider__slug="cudo", gpu__slug="a800-pcie-80gb")
    assert offers.count() == 13 and all(o.gpu_confirmed for o in offers)
    price = InstancePrice.objects.get(
        offer__instance_type="intel-ice-lake-a800-pci_1x2v4gb", region__code="us-carlsbad-1"
    )
    assert price.usd_per_gpu_hour == Decimal("0.8234")


def test_an_rtx_pro_6000_whose_edition_is_not_stated_is_the_server_edition_unconfirmed(catalog):
    for provider, instance in (
        ("daytona", "1x-RTXPRO6000"),
        ("shadeform", "massedcompute_RTXPro6000"),
        ("jarvislabs", "1x_RTXPRO6000_28V_160G"),
        ("lium", "RTXPRO6000_1x"),
    ):
        found = InstanceOffer.objects.select_related("gpu").get(
            provider__slug=provider, instance_type=instance
        )
        assert (found.gpu.slug, found.gpu_confirmed) == ("rtx-pro-6000-server", False), instance
        assert "edition not stated" in found.gpu_evidence
    vast = InstanceOffer.objects.filter(provider__slug="vast", gpu__slug="rtx-pro-6000")
    assert vast.exists() and all(o.gpu_confirmed for o in vast)


@pytest.mark.parametrize(
    ("name", "memory", "instance", "slug"),
    [
        ("NVIDIA-H200-NVL", None, "x", "h200-nvl"),
        ("H200", Decimal(141), "1x-H200_NVL", "h200-nvl"),
        ("H200", Decimal(141), "gpu_8x_h200", "h200"),
        ("GB300", None, "x", "gb300"),
        ("GB200", None, "x", "gb200"),
        ("MI350X", None, "x", "mi350x"),
        ("A800", Decimal(80), "intel-ice-lake-a800-pci_1x2v4gb", "a800-pcie-80gb"),
        ("RTX PRO 6000 96GB", None, "ECS1GPU12", "rtx-pro-6000-server"),
        ("RTXPRO6000WS", Decimal(96), "x", "rtx-pro-6000"),
    ],
)
def test_late_2026_names_resolve_to_their_model(name, memory, instance, slug):
    assert read_aliases().resolve(name, memory, instance) == slug


def test_an_a800_whose_variant_is_not_stated_is_refused_never_guessed():
    with pytest.raises(RowRejected, match="only the 80 GB PCIe card"):
        read_aliases().resolve_variant("A800", Decimal(40), "some-a800_1x")


# --- the GPU pages and the API ----------------------------------------------------------------


def test_the_gpu_models_page_shows_fp4_beside_the_other_precisions(client, catalog):
    client.force_login(UserFactory(username="buyer", roles=[VIEWER]))
    body = client.get(reverse("gpus")).content.decode()
    head = body.split("<thead>", 1)[1].split("</thead>", 1)[0]
    assert '<th class="num">FP8 [TFLOPS]</th><th class="num">FP4 [TFLOPS]</th>' in head
    rows = {
        row.split("<code>", 1)[1].split("</code>", 1)[0]: row
        for row in body.split("<tbody>", 1)[1].split("</tbody>", 1)[0].split("<tr>")[1:]
    }
    assert rows.keys() >= LATE_2026_GPUS
    cells = re.findall(r'<td class="num">([^<]*)</td>', rows["gb300"])
    # memory, bandwidth, BF16, FP16, FP8, FP4, TF32, TDP
    assert cells == ["288", "8", "2500", "2500", "5000", "15000", "1250", "1400"]
    cells = re.findall(r'<td class="num">([^<]*)</td>', rows["h100-sxm"])
    assert cells[5] == ""  # no FP4 on Hopper: an empty cell


def test_the_gpu_api_gives_fp4_orders_by_it_and_refuses_a_negative_one(catalog):
    clients = role_clients()
    answer = clients[VIEWER].get("/api/v1/gpus/mi355x/").json()
    assert answer["fp4_dense_tflops"] == "10066.300" and answer["fp8_dense_tflops"] == "5033.200"
    assert clients[VIEWER].get("/api/v1/gpus/h200-nvl/").json()["fp4_dense_tflops"] is None
    listed = clients[VIEWER].get("/api/v1/gpus/", {"ordering": "-fp4_dense_tflops"}).json()
    fp4 = [(row["slug"], row["fp4_dense_tflops"]) for row in listed["results"]]
    assert fp4[:4] == [
        ("gb300", "15000.000"), ("b300", "14000.000"), ("mi355x", "10066.300"), ("gb200", "10000.000")
    ]  # fmt: skip
    assert fp4[len(FP4)][1] is None  # the GPUs without an FP4 figure come after, either way
    listed = clients[VIEWER].get("/api/v1/gpus/", {"ordering": "fp4_dense_tflops"}).json()
    fp4 = [(row["slug"], row["fp4_dense_tflops"]) for row in listed["results"]]
    assert fp4[0] == ("rtx-5090", "1676.000") and fp4[len(FP4) - 1][0] == "gb300"
    assert fp4[len(FP4)][1] is None
    refused = clients[CATALOG_EDITOR].patch(
        "/api/v1/gpus/gb300/", {"fp4_dense_tflops": "-1"}, format="json"
    )
    assert refused.status_code == 400
    assert "fp4_dense_tflops" in str(refused.json())
    assert GpuModel.objects.get(slug="gb300").fp4_dense_tflops == Decimal(15000)


def test_the_openapi_schema_documents_fp4_on_the_gpu_model(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    field = schema["components"]["schemas"]["GpuModel"]["properties"]["fp4_dense_tflops"]
    assert field["nullable"] is True and "FP4" in field["description"]
    params = schema["paths"]["/api/v1/gpus/"]["get"]["parameters"]
    ordering = next(p for p in params if p["name"] == "ordering")
    assert "fp4_dense_tflops" in str(ordering)
