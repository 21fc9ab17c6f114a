"""model in the loop: the attached model's P(paraphrase) and guess per item, and whether the
annotator kept the guess shown to them

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25 15:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("items", schema=None) as batch_op:
        batch_op.add_column(sa.Column("model_p", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("model_label", sa.String(length=50), nullable=True))
    with op.batch_alter_table("annotations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("model_guess", sa.String(length=50), nullable=True))
        batch_op.add_column(sa.Column("model_kept", sa.Boolean(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("annotations", schema=None) as batch_op:
        batch_op.drop_column("model_kept")
        batch_op.drop_column("model_guess")
    with op.batch_alter_table("items", schema=None) as batch_op:
        batch_op.drop_column("model_label")
        batch_op.drop_column("model_p")
