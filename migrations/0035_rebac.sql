-- Relationship-based access (ReBAC): entity types, the relations a subject may hold on an entity of a type (with the
-- subject types allowed), the actions of a type (granted by any of the listed relations), and relation assignments
-- linking one subject entity to one target entity, optionally within [active_from, active_until).
-- Renames cascade through the foreign keys; the key arrays (subject types of a relation, relations of an action) are
-- rewritten by the service in the same transaction.
CREATE TABLE entitlement_entity_types (
  key          text COLLATE "C" PRIMARY KEY,
  description  text NOT NULL DEFAULT '',
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  seq          bigserial NOT NULL
);

CREATE TABLE entitlement_entity_relations (
  entity_type_key           text COLLATE "C" NOT NULL REFERENCES entitlement_entity_types (key) ON UPDATE CASCADE ON DELETE CASCADE,
  key                       text COLLATE "C" NOT NULL,
  subject_entity_type_keys  text[] NOT NULL DEFAULT '{}',
  created_at                timestamptz NOT NULL DEFAULT now(),
  seq                       bigserial NOT NULL,
  PRIMARY KEY (entity_type_key, key)
);

CREATE TABLE entitlement_entity_actions (
  entity_type_key  text COLLATE "C" NOT NULL REFERENCES entitlement_entity_types (key) ON UPDATE CASCADE ON DELETE CASCADE,
  key              text COLLATE "C" NOT NULL,
  relation_keys    text[] NOT NULL DEFAULT '{}',
  created_at       timestamptz NOT NULL DEFAULT now(),
  seq              bigserial NOT NULL,
  PRIMARY KEY (entity_type_key, key)
);

CREATE TABLE entitlement_relation_assignments (
  target_entity_type_key   text COLLATE "C" NOT NULL,
  target_key               text COLLATE "C" NOT NULL,
  relation_key             text COLLATE "C" NOT NULL,
  subject_entity_type_key  text COLLATE "C" NOT NULL REFERENCES entitlement_entity_types (key) ON UPDATE CASCADE,
  subject_key              text COLLATE "C" NOT NULL,
  active_from              timestamptz,
  active_until             timestamptz,
  created_at               timestamptz NOT NULL DEFAULT now(),
  seq                      bigserial NOT NULL,
  PRIMARY KEY (target_entity_type_key, target_key, relation_key, subject_entity_type_key, subject_key),
  FOREIGN KEY (target_entity_type_key, relation_key) REFERENCES entitlement_entity_relations (entity_type_key, key) ON UPDATE CASCADE,
  CHECK (active_from IS NULL OR active_until IS NULL OR active_until > active_from)
);
-- Lists answer in creation order (seq). The check looks up by target first (primary key); listing pages in creation order; deletes look up by subject type.
CREATE INDEX entitlement_relation_assignments_by_seq ON entitlement_relation_assignments (seq);
CREATE INDEX entitlement_relation_assignments_by_subject ON entitlement_relation_assignments (subject_entity_type_key, subject_key);
