"""login throttle and known logins in the store (shared by every server worker)

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25 15:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "login_failures",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("key", sa.String(length=400), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
    )
    op.create_index("ix_login_failures_key", "login_failures", ["key"])
    op.create_table(
        "known_logins",
        sa.Column("key", sa.String(length=400), primary_key=True),
        sa.Column("last_at", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("known_logins")
    op.drop_index("ix_login_failures_key", table_name="login_failures")
    op.drop_table("login_failures")
