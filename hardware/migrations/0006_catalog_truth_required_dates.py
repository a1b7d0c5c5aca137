"""Second step of the catalog-truth change, in its own transaction (PostgreSQL cannot alter a
table with row updates pending in the same one): drop the fields 0005 carried over, and require
the stated date now every price has one."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("hardware", "0005_catalog_truth"),
    ]

    operations = [
        migrations.RemoveField(
            model_name='egresstier',
            name='observed',
        ),
        migrations.RemoveField(
            model_name='historicalegresstier',
            name='observed',
        ),
        migrations.RemoveField(
            model_name='historicalinstanceprice',
            name='is_suspect',
        ),
        migrations.RemoveField(
            model_name='instanceprice',
            name='is_suspect',
        ),
        migrations.RemoveField(
            model_name='stagedprice',
            name='is_suspect',
        ),
        migrations.AlterField(
            model_name="instanceprice",
            name="stated_on",
            field=models.DateField(help_text="the date the source gave the price"),
        ),
        migrations.AlterField(
            model_name="historicalinstanceprice",
            name="stated_on",
            field=models.DateField(help_text="the date the source gave the price"),
        ),
    ]
