import { AppError } from '../../../http/errors.ts';
import type { Queryable } from '../../../storage/db.ts';
import type { EventsService } from '../../events/index.ts';
import type { RolesService } from '../../roles/index.ts';
import type { TenantsService } from '../../tenants/index.ts';
import type { SessionsService } from '../../auth/index.ts';
import type { PasswordService } from '../../credentials/index.ts';
import * as users from '../../users/index.ts';
import type { ConnectionRow } from '../connections.store.ts';
import { displayOf, emailOf } from './resource.ts';
import * as store from './store.ts';

export interface SyncDeps {
  roles: RolesService;
  tenants: TenantsService;
  events: EventsService;
  sessions: SessionsService;
  passwords: PasswordService;
}

/**
 * Sync to user management: a directory user of a connection with `syncToUserManagement` is a Gatehouse user of the
 * connection's account. A new email makes a new user (`managedBy: scim2`, provider `scim2`, owned by the connection:
 * its profile follows the directory); an email that already has a Gatehouse user is linked, and only its membership
 * of this account (enabled state, roles) is managed, never its profile, which other accounts share. A SCIM `password`
 * is the password of a user the connection owns (never of a linked one), held to the account's password policy.
 */
export function createSync(deps: SyncDeps) {
  const creation = users.createUserCreation(deps);
  const scopeOf = (c: ConnectionRow): store.Scope => ({ tenantId: c.tenant_id, connectionId: c.id });

  /** A directory-set password meets the account's policy like any other (refused: 400 invalidValue, nothing kept). */
  async function hashFor(tx: Queryable, c: ConnectionRow, password: string, email: string | null, userId?: string) {
    try {
      await deps.passwords.validate(tx, password, { tenantId: c.tenant_id, email: email ?? undefined, userId });
    } catch (err) {
      if (err instanceof AppError && err.code === 'WEAK_PASSWORD') {
        throw new AppError('SCIM_INVALID_VALUE', `password: ${err.message}`);
      }
      throw err;
    }
    return deps.passwords.hash(password);
  }

  /** Sets the password of a user the connection owns (a PUT or PATCH carrying `password`). */
  async function setPassword(tx: Queryable, c: ConnectionRow, row: store.ScimUserRow, password: string): Promise<void> {
    if (!row.user_id || !row.owns_user) return;
    const user = await users.findById(tx, row.user_id, true);
    if (!user) return;
    const hash = await hashFor(tx, c, password, user.email, user.id);
    await users.updateUser(tx, user.id, { password_hash: hash, password_temporary: false, must_reset_password: false });
    await deps.passwords.remember(tx, user.id, hash);
    await deps.events.emit(tx, {
      eventKey: 'user.password_changed',
      tenantId: c.tenant_id,
      entity: { type: 'user', id: user.id },
      data: { userId: user.id, tenantId: c.tenant_id },
    });
  }

  async function setActive(tx: Queryable, c: ConnectionRow, userId: string, active: boolean): Promise<void> {
    await users.updateMembership(tx, c.tenant_id, userId, { is_disabled: !active });
    if (!active) await deps.sessions.endAccountSessions(tx, userId, c.tenant_id, 'deprovisioned by SCIM');
  }

  /**
   * The account facts a new membership needs (live account, sub-account access, default roles), read at most once
   * per transaction step: a sync chunk of 200 users reads them once, not 200 times.
   */
  function accountFacts(tx: Queryable, c: ConnectionRow) {
    let account: Promise<{ sub_account_access_type: string | null }> | undefined;
    let defaults: Promise<string[]> | undefined;
    return {
      account: () => (account ??= deps.tenants.requireLive(tx, c.tenant_id)),
      defaultRoleIds: () => (defaults ??= deps.roles.defaultRoleIds(tx, c.tenant_id)),
    };
  }
  type AccountFacts = ReturnType<typeof accountFacts>;

  /**
   * The Gatehouse user of a directory user with this email: a new user owned by the connection, or the existing user
   * of that email (linked: only its membership is managed). Joins it to the account (default roles for a new
   * membership) and gives the membership the directory's active state.
   */
  async function link(
    tx: Queryable,
    c: ConnectionRow,
    u: { email: string; name: string | undefined; externalId: string | null; active: boolean; password?: string },
    facts = accountFacts(tx, c),
  ): Promise<{ userId: string; owns: boolean }> {
    const existing = await users.findByEmail(tx, u.email);
    if (!existing) {
      const passwordHash = u.password === undefined ? null : await hashFor(tx, c, u.password, u.email);
      const created = await creation.create(tx, {
        source: 'scim',
        tenantId: c.tenant_id,
        email: u.email,
        name: u.name,
        externalId: u.externalId,
        verified: true,
        provider: 'scim2',
        managedBy: 'scim2',
        passwordHash,
        roleIds: await facts.defaultRoleIds(),
      });
      // A new membership starts enabled; an inactive directory user's is disabled.
      if (!u.active) await setActive(tx, c, created.id, false);
      return { userId: created.id, owns: true };
    }
    const account = await facts.account();
    const subAccess = account.sub_account_access_type !== 'defaultOff';
    const joined = await users.addMembership(tx, c.tenant_id, existing.id, { subAccess, expiresAt: null });
    if (joined) await users.addRoles(tx, c.tenant_id, existing.id, await facts.defaultRoleIds());
    // A new membership starts enabled; an existing one (or an inactive user) gets the directory's state.
    if (!joined || !u.active) await setActive(tx, c, existing.id, u.active);
    return { userId: existing.id, owns: false };
  }

  function emailFor(data: Record<string, unknown>, strict: boolean): string | undefined {
    const email = emailOf(data);
    if (!email && strict)
      throw new AppError(
        'SCIM_INVALID_VALUE',
        'With syncToUserManagement on, a user needs an email address: emails holds no valid address and userName is not one',
      );
    return email;
  }

  /**
   * Makes (or links) the Gatehouse user of a stored directory user and records the link. `strict`: a user without an
   * email is a 400 (otherwise it stays directory-only). `recompute: false` leaves the mapped roles to the caller
   * (the sync job recomputes a whole chunk at once).
   */
  async function materialise(
    tx: Queryable,
    c: ConnectionRow,
    row: store.ScimUserRow,
    strict: boolean,
    opts: { facts?: AccountFacts; recompute?: boolean; password?: string } = {},
  ): Promise<void> {
    const email = emailFor(row.data, strict);
    if (!email) return;
    const u = {
      email,
      name: displayOf(row.data),
      externalId: row.external_id,
      active: row.active,
      password: opts.password,
    };
    const { userId, owns } = await link(tx, c, u, opts.facts);
    await store.linkUser(tx, scopeOf(c), row.id, userId, owns);
    row.user_id = userId;
    row.owns_user = owns;
    if (opts.recompute !== false) await recomputeRoles(tx, c, [row]);
  }

  /** Keeps the roles the group-to-role mapping gives in step with the user's groups. */
  async function recomputeRoles(tx: Queryable, c: ConnectionRow, rows: store.ScimUserRow[]): Promise<void> {
    // Nothing to give and nothing given before: no statement (the common case without a mapping).
    const linked = rows.filter((r) => r.user_id && (c.group_roles.length > 0 || (r.granted_role_ids ?? []).length > 0));
    if (linked.length === 0) return;
    const names = await store.groupNamesOf(
      tx,
      scopeOf(c),
      linked.map((r) => r.id),
    );
    for (const r of linked) {
      const groups = new Set(names.get(r.id) ?? []);
      const desired = [
        ...new Set(c.group_roles.filter((m) => groups.has(m.group.toLowerCase())).flatMap((m) => m.roleIds)),
      ];
      const granted = r.granted_role_ids ?? [];
      const add = desired.filter((x) => !granted.includes(x));
      const remove = granted.filter((x) => !desired.includes(x));
      if (!add.length && !remove.length) continue;
      if (add.length) await users.addRoles(tx, c.tenant_id, r.user_id!, add);
      if (remove.length) await users.removeRoles(tx, c.tenant_id, r.user_id!, remove);
      await store.setGrantedRoles(tx, scopeOf(c), r.id, desired);
      r.granted_role_ids = desired;
    }
  }

  return {
    materialise,
    recomputeRoles,
    accountFacts,

    /**
     * Before a create's insert (sync on): the Gatehouse user the new directory user will be linked to, so the insert
     * stores the link at once. A new directory user is in no group yet, so the mapping gives it no role.
     */
    async beforeCreate(
      tx: Queryable,
      c: ConnectionRow,
      data: Record<string, unknown>,
      columns: { external_id: string | null; active: boolean },
      password?: string,
    ): Promise<{ userId: string; owns: boolean } | undefined> {
      if (!c.sync_to_user_management) return undefined;
      const email = emailFor(data, true)!;
      const u = { email, name: displayOf(data), externalId: columns.external_id, active: columns.active, password };
      return link(tx, c, u);
    },

    /** After a create's insert: the events (the Gatehouse user, if any, was made by beforeCreate). */
    async created(tx: Queryable, c: ConnectionRow, row: store.ScimUserRow): Promise<void> {
      await deps.events.emit(tx, {
        eventKey: 'scim.user_provisioned',
        tenantId: c.tenant_id,
        entity: { type: 'user', id: row.user_id ?? row.id },
        data: {
          connectionId: c.id,
          scimUserId: row.id,
          userName: row.user_name,
          userId: row.user_id,
          active: row.active,
        },
      });
      if (!row.active) await deprovisioned(tx, c, row, 'deactivated');
    },

    async updated(
      tx: Queryable,
      c: ConnectionRow,
      before: store.ScimUserRow,
      after: store.ScimUserRow,
      password?: string,
    ): Promise<void> {
      after.granted_role_ids = before.granted_role_ids;
      if (c.sync_to_user_management) {
        if (!after.user_id) await materialise(tx, c, after, true, { password });
        else {
          if (after.owns_user) {
            const email = emailOf(after.data);
            const values: Record<string, unknown> = { name: displayOf(after.data), external_id: after.external_id };
            if (email && email !== emailOf(before.data)) {
              const other = await users.findByEmail(tx, email);
              if (other && other.id !== after.user_id)
                throw new AppError('SCIM_UNIQUENESS', `Another Gatehouse user has the email ${email}`);
              values.email = email;
            }
            await users.updateUser(tx, after.user_id, values);
            if (password !== undefined) await setPassword(tx, c, after, password);
          }
          if (before.active !== after.active) await setActive(tx, c, after.user_id, after.active);
        }
      }
      if (before.active && !after.active) await deprovisioned(tx, c, after, 'deactivated');
    },

    async deleted(tx: Queryable, c: ConnectionRow, row: store.ScimUserRow): Promise<void> {
      if (row.user_id) await leave(tx, c.tenant_id, row.user_id);
      await deprovisioned(tx, c, row, 'deleted');
    },

    leave,

    /** A PUT or PATCH whose only change is a new password (the SCIM data is the same). */
    async passwordOnly(tx: Queryable, c: ConnectionRow, row: store.ScimUserRow, password: string): Promise<void> {
      if (c.sync_to_user_management) await setPassword(tx, c, row, password);
    },
  };

  async function leave(tx: Queryable, tenantId: string, userId: string): Promise<void> {
    await deps.sessions.endAccountSessions(tx, userId, tenantId, 'deprovisioned by SCIM');
    if (await users.removeMembership(tx, tenantId, userId)) await users.settleAfterLeaving(tx, [userId], tenantId);
  }

  async function deprovisioned(
    tx: Queryable,
    c: ConnectionRow,
    row: store.ScimUserRow,
    reason: 'deactivated' | 'deleted',
  ): Promise<void> {
    await deps.events.emit(tx, {
      eventKey: 'scim.user_deprovisioned',
      tenantId: c.tenant_id,
      entity: { type: 'user', id: row.user_id ?? row.id },
      data: { connectionId: c.id, scimUserId: row.id, userName: row.user_name, userId: row.user_id, reason },
    });
  }
}

export type Sync = ReturnType<typeof createSync>;
