"""the admin pages at 155,000 items: statistics cached per project revision
(``projects.revision``, bumped by triggers in the transaction of every change the statistics
page reads, and ``stats_cache``), and two covering indexes of the submitted annotations

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27 14:00:00

``ix_annotations_judged`` serves the per-item counts of the project page and the statistics
(disagreements, raw agreement, the QA queue: read from the index, in item order, without
touching the table) and ``ix_annotations_progress`` the progress page (each annotator's
counts, and their latest submissions read backwards, a few hundred rows each).

The triggers bump the revision of a project when a submitted annotation is inserted, changed
(or an annotation becomes or stops being submitted) or deleted, when an item is inserted or
deleted or its ``label``, ``resolved_by`` or ``origin`` changes, and when the project's scheme
changes. They are triggers, not calls in the services, so that no write path can forget one:
a restore, a bulk statement or an edit made by hand with ``sqlite3``/``psql`` moves the
revision as well. Drafts (autosaves) move nothing.

SQLite runs row triggers; PostgreSQL runs one statement trigger per statement (with
transition tables), so a statement that touches 155,000 rows updates each project row once
instead of 155,000 times in one transaction.

A later migration that rebuilds ``annotations``, ``items`` or ``projects`` (Alembic's batch
mode on SQLite copies the table and drops it) drops these triggers with the table and must
create them again: ``tests/annotate/test_stats_cache.py`` checks that they exist at head.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

BUMP = "UPDATE projects SET revision = revision + 1 WHERE id"

#: SQLite: (trigger name, statement)
SQLITE_TRIGGERS = (
    (
        "annotations_revision_insert",
        "AFTER INSERT ON annotations WHEN NEW.status = 'submitted' "
        f"BEGIN {BUMP} = NEW.project_id; END",
    ),
    (
        "annotations_revision_update",
        "AFTER UPDATE ON annotations "
        "WHEN OLD.status = 'submitted' OR NEW.status = 'submitted' "
        f"BEGIN {BUMP} IN (OLD.project_id, NEW.project_id); END",
    ),
    (
        "annotations_revision_delete",
        "AFTER DELETE ON annotations WHEN OLD.status = 'submitted' "
        f"BEGIN {BUMP} = OLD.project_id; END",
    ),
    ("items_revision_insert", f"AFTER INSERT ON items BEGIN {BUMP} = NEW.project_id; END"),
    (
        "items_revision_update",
        "AFTER UPDATE OF label, resolved_by, origin, project_id ON items "
        f"BEGIN {BUMP} IN (OLD.project_id, NEW.project_id); END",
    ),
    ("items_revision_delete", f"AFTER DELETE ON items BEGIN {BUMP} = OLD.project_id; END"),
    (
        "projects_revision_scheme",
        "AFTER UPDATE OF scheme ON projects WHEN OLD.scheme IS NOT NEW.scheme "
        f"BEGIN {BUMP} = NEW.id; END",
    ),
)

#: PostgreSQL: one function per table; TG_OP tells which transition tables exist
POSTGRES_FUNCTIONS = {
    "parakit_annotations_revision": """
        BEGIN
          IF TG_OP = 'INSERT' THEN
            UPDATE projects SET revision = revision + 1 WHERE id IN
              (SELECT project_id FROM new_rows WHERE status = 'submitted');
          ELSIF TG_OP = 'DELETE' THEN
            UPDATE projects SET revision = revision + 1 WHERE id IN
              (SELECT project_id FROM old_rows WHERE status = 'submitted');
          ELSE
            UPDATE projects SET revision = revision + 1 WHERE id IN
              (SELECT project_id FROM old_rows WHERE status = 'submitted'
               UNION SELECT project_id FROM new_rows WHERE status = 'submitted');
          END IF;
          RETURN NULL;
        END
    """,
    "parakit_items_revision": """
        BEGIN
          IF TG_OP = 'INSERT' THEN
            UPDATE projects SET revision = revision + 1 WHERE id IN
              (SELECT project_id FROM new_rows);
          ELSIF TG_OP = 'DELETE' THEN
            UPDATE projects SET revision = revision + 1 WHERE id IN
              (SELECT project_id FROM old_rows);
          ELSE
            UPDATE projects SET revision = revision + 1 WHERE id IN
              (SELECT side.project_id
               FROM old_rows o JOIN new_rows n ON n.id = o.id,
                    LATERAL (VALUES (o.project_id), (n.project_id)) AS side(project_id)
               WHERE n.label IS DISTINCT FROM o.label
                  OR n.resolved_by IS DISTINCT FROM o.resolved_by
                  OR n.origin IS DISTINCT FROM o.origin
                  OR n.project_id IS DISTINCT FROM o.project_id);
          END IF;
          RETURN NULL;
        END
    """,
    "parakit_scheme_revision": """
        BEGIN
          NEW.revision := NEW.revision + 1;
          RETURN NEW;
        END
    """,
}

#: PostgreSQL: (trigger name, statement)
POSTGRES_TRIGGERS = (
    (
        "annotations_revision_insert",
        "AFTER INSERT ON annotations REFERENCING NEW TABLE AS new_rows "
        "FOR EACH STATEMENT EXECUTE FUNCTION parakit_annotations_revision()",
    ),
    (
        "annotations_revision_update",
        "AFTER UPDATE ON annotations REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows "
        "FOR EACH STATEMENT EXECUTE FUNCTION parakit_annotations_revision()",
    ),
    (
        "annotations_revision_delete",
        "AFTER DELETE ON annotations REFERENCING OLD TABLE AS old_rows "
        "FOR EACH STATEMENT EXECUTE FUNCTION parakit_annotations_revision()",
    ),
    (
        "items_revision_insert",
        "AFTER INSERT ON items REFERENCING NEW TABLE AS new_rows "
        "FOR EACH STATEMENT EXECUTE FUNCTION parakit_items_revision()",
    ),
    (
        "items_revision_update",
        "AFTER UPDATE ON items REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows "
        "FOR EACH STATEMENT EXECUTE FUNCTION parakit_items_revision()",
    ),
    (
        "items_revision_delete",
        "AFTER DELETE ON items REFERENCING OLD TABLE AS old_rows "
        "FOR EACH STATEMENT EXECUTE FUNCTION parakit_items_revision()",
    ),
    (
        "projects_revision_scheme",
        "BEFORE UPDATE OF scheme ON projects FOR EACH ROW "
        "WHEN (OLD.scheme::text IS DISTINCT FROM NEW.scheme::text) "
        "EXECUTE FUNCTION parakit_scheme_revision()",
    ),
)


def upgrade() -> None:
    with op.batch_alter_table("projects", schema=None) as batch_op:
        batch_op.add_column(sa.Column("revision", sa.Integer(), server_default="0", nullable=False))
    with op.batch_alter_table("annotations", schema=None) as batch_op:
        batch_op.create_index(
            "ix_annotations_judged",
            ["project_id", "status", "item_id", "task", "label", "annotator_id", "flags"],
            unique=False,
        )
        batch_op.create_index(
            "ix_annotations_progress",
            ["project_id", "task", "status", "annotator_id", "submitted_at", "id"],
            unique=False,
        )
    op.create_table(
        "stats_cache",
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=50), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("value", sa.JSON(), nullable=False),
        sa.Column("computed_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("project_id", "name"),
    )
    if op.get_bind().dialect.name == "postgresql":
        for name, body in POSTGRES_FUNCTIONS.items():
            op.execute(
                f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql "
                f"AS $${body}$$"
            )
        for name, statement in POSTGRES_TRIGGERS:
            op.execute(f"CREATE TRIGGER {name} {statement}")
    else:
        for name, statement in SQLITE_TRIGGERS:
            op.execute(f"CREATE TRIGGER {name} {statement}")


def downgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    for name, statement in POSTGRES_TRIGGERS if postgres else SQLITE_TRIGGERS:
        table = statement.split(" ON ", 1)[1].split()[0]
        op.execute(f"DROP TRIGGER IF EXISTS {name}" + (f" ON {table}" if postgres else ""))
    if postgres:
        for name in POSTGRES_FUNCTIONS:
            op.execute(f"DROP FUNCTION IF EXISTS {name}()")
    op.drop_table("stats_cache")
    with op.batch_alter_table("annotations", schema=None) as batch_op:
        batch_op.drop_index("ix_annotations_progress")
        batch_op.drop_index("ix_annotations_judged")
    with op.batch_alter_table("projects", schema=None) as batch_op:
        batch_op.drop_column("revision")
