"""store secrets: the key of the digest every backup carries (made at random here)

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-27 01:10:00
"""

from __future__ import annotations

import secrets

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    table = op.create_table(
        "store_secrets",
        sa.Column("name", sa.String(length=50), primary_key=True),
        sa.Column("value", sa.String(length=200), nullable=False),
    )
    op.bulk_insert(table, [{"name": "backup", "value": secrets.token_hex(32)}])


def downgrade() -> None:
    op.drop_table("store_secrets")
