from django.db import migrations, models

from hardware.geography import region_geography


def regions_place(apps, schema_editor):
    """Every region already stored gets the geography its code says (empty: it does not say)."""
    Region = apps.get_model("hardware", "Region")
    regions = list(Region.objects.all())
    for region in regions:
        region.geography = region_geography(region.code) or ""
    Region.objects.bulk_update(regions, ["geography"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [
        ("hardware", "0012_gpumodel_fp4_dense_tflops"),
    ]

    operations = [
        migrations.AddField(
            model_name="region",
            name="geography",
            field=models.CharField(
                blank=True,
                choices=[
                    ("americas", "Americas"),
                    ("europe", "Europe"),
                    ("asia-pacific", "Asia-Pacific"),
                    ("other", "Other (Middle East, Africa)"),
                ],
                help_text="the part of the world the region is in; empty when its code does not "
                "say (set from the code when the region is created, by hardware.geography)",
                max_length=16,
            ),
        ),
        migrations.RunPython(regions_place, migrations.RunPython.noop),
    ]
