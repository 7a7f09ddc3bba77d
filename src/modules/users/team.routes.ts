import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { accountOf, guard, type UserAuth } from '../../http/auth.ts';
import { AppError } from '../../http/errors.ts';
import { PageEnvelopeOf, pageEnvelope } from '../../http/paging.ts';
import { grantorOf, Role } from '../roles/index.ts';
import { Empty, ListUsersQuery, User, UserParams } from './schema.ts';
import type { UsersService } from './service.ts';
import { asSeenBy } from './consent.ts';

const tags = ['team'];
const T = '/team/resources';
const TenantHeaders = Type.Object({
  'gatehouse-tenant-id': Type.Optional(
    Type.String({
      maxLength: 255,
      description:
        'required with an environment token: the account (alias: frontegg-tenant-id); a user token acts on its own account',
    }),
  ),
});

/** The team list's query: the user list's parameters, plus the older names pageSize, pageOffset (a page index) and filter. */
const MembersQuery = Type.Object({
  ...ListUsersQuery.properties,
  pageSize: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 200, description: 'alias of _limit (wins when both are sent)' }),
  ),
  pageOffset: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 10_000_000,
      description: 'alias of _offset, a page index (wins when both are sent)',
    }),
  ),
  filter: Type.Optional(Type.String({ maxLength: 320, description: 'alias of _filter: substring of email or name' })),
});
const UpdateMember = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'the member (user id)' }),
  roleIds: Type.Optional(
    Type.Array(Type.String({ maxLength: 64 }), {
      maxItems: 100,
      uniqueItems: true,
      description: 'the roles the member has afterwards; [] removes them all; left out: unchanged',
    }),
  ),
});
// The browser SDK's loadUsers reads PaginationResult {items, totalPages}: the page envelope plus its page count.
const MembersPage = Type.Object({ ...PageEnvelopeOf(User).properties, totalPages: Type.Integer() });
const Stats = Type.Object({
  totalItems: Type.Integer({ description: 'members of the account' }),
  activatedItems: Type.Integer({ description: 'not disabled, signed in at least once' }),
  pendingItems: Type.Integer({ description: 'not disabled, never signed in (invited or created, not yet used)' }),
  disabledItems: Type.Integer({ description: 'membership disabled' }),
  addedThisWeek: Type.Integer({ description: 'joined in the last 7 days' }),
  superAdmins: Type.Integer({ description: 'members who are super-users' }),
});
/** A picture URL (http, https, or a data: image URL), at most 4095 characters as the user record keeps it; null removes it. */
const PICTURE_URL = '^(https?://\\S+|data:image/[A-Za-z0-9.+-]+;base64,[A-Za-z0-9+/=]+)$';
const PictureBody = Type.Object({
  profilePictureUrl: Type.Optional(Type.Union([Type.String({ maxLength: 4095, pattern: PICTURE_URL }), Type.Null()])),
  profileImage: Type.Optional(
    Type.String({ maxLength: 4095, pattern: PICTURE_URL, description: 'alias of profilePictureUrl' }),
  ),
});

/**
 * The older team screen's routes for the caller's account (registered by usersRoutes): a user token acts on its own
 * account with the users permissions, an environment token on the account of the tenant header.
 */
export const teamRoutes: FastifyPluginAsyncTypebox<{ users: UsersService }> = async (app, { users }) => {
  app.get(
    `${T}/members/v1`,
    {
      config: guard.any('fe.secure.read.users'),
      schema: {
        tags,
        summary: 'Members of the account, paged as the user lists (plus a top-level totalPages)',
        headers: TenantHeaders,
        querystring: MembersQuery,
        response: { 200: MembersPage },
      },
    },
    async (req) => {
      const { pageSize, pageOffset, filter, ...rest } = req.query;
      // _limit and _offset always arrive (schema defaults), so an older name, when sent, wins.
      const query = {
        ...rest,
        _limit: pageSize ?? rest._limit,
        _offset: pageOffset ?? rest._offset,
        _filter: filter ?? rest._filter,
        _tenantId: undefined,
      };
      const r = await users.list(query, accountOf(req));
      const items = r.items.map((u) => asSeenBy(req.auth, u));
      const page = pageEnvelope(items, {
        total: r.total,
        limit: r.limit,
        page: r.page,
        path: `${T}/members/v1`,
        query,
      });
      return { ...page, totalPages: page._metadata.totalPages };
    },
  );

  app.put(
    `${T}/members/v1`,
    {
      config: guard.any('fe.secure.write.users'),
      schema: {
        tags,
        summary: "Set a member's roles in the account (replaces them; left out: unchanged); answers the member",
        headers: TenantHeaders,
        body: UpdateMember,
        response: { 200: User },
      },
    },
    async (req) => {
      const tenantId = accountOf(req);
      // The browser SDK types the body Partial<ITeamUser>: without roleIds the call only reads the member back.
      const { id, roleIds } = req.body;
      if (roleIds !== undefined) await users.setRoles(tenantId, id, roleIds, grantorOf(req.auth!));
      return asSeenBy(req.auth, await users.get(req.body.id, tenantId));
    },
  );

  app.delete(
    `${T}/members/v1/:userId`,
    {
      config: guard.any('fe.secure.delete.users'),
      schema: {
        tags,
        summary: 'Remove a member from the account (a user left with no account is deleted)',
        headers: TenantHeaders,
        params: UserParams,
        response: { 200: Empty },
      },
    },
    async (req) => {
      await users.remove(req.params.userId, accountOf(req));
      return {};
    },
  );

  app.get(
    `${T}/roles/v1`,
    {
      config: guard.any('fe.secure.read.users'),
      schema: {
        tags,
        summary: "Roles a member of the account may be given: the environment's and the account's own",
        headers: TenantHeaders,
        response: { 200: Type.Array(Role) },
      },
    },
    async (req) => users.assignableRoles(accountOf(req)),
  );

  app.get(
    `${T}/stats/v1/members`,
    {
      config: guard.any('fe.secure.read.users'),
      schema: {
        tags,
        summary:
          'Member counts of the account: total, activated, pending, disabled, added in the last 7 days, super-users',
        headers: TenantHeaders,
        response: { 200: Stats },
      },
    },
    async (req) => {
      const s = await users.memberStats(accountOf(req));
      return {
        totalItems: s.total,
        activatedItems: s.activated,
        pendingItems: s.pending,
        disabledItems: s.disabled,
        addedThisWeek: s.addedThisWeek,
        superAdmins: s.superAdmins,
      };
    },
  );

  app.put(
    `${T}/profile/me/image/v1`,
    {
      config: guard.user(),
      schema: {
        tags,
        summary: 'Set my profile picture to a URL (no upload: the URL is stored as given); null removes it',
        body: PictureBody,
        response: { 200: Type.Object({ profilePictureUrl: Type.String() }) },
      },
    },
    async (req) => {
      const me = req.auth as UserAuth;
      const { profilePictureUrl, profileImage } = req.body;
      if (profilePictureUrl !== undefined && profileImage !== undefined && profilePictureUrl !== profileImage) {
        throw new AppError('VALIDATION', 'body.profilePictureUrl and body.profileImage differ: send one of them', {
          fields: ['profilePictureUrl', 'profileImage'],
        });
      }
      const url = profilePictureUrl !== undefined ? profilePictureUrl : profileImage;
      if (url === undefined)
        throw new AppError(
          'VALIDATION',
          'body.profilePictureUrl is required (a URL, at most 4095 characters, or null to remove the picture)',
          { fields: ['profilePictureUrl'] },
        );
      const user = await users.updateProfile(me.userId, me.tenantId, { profilePictureUrl: url });
      return { profilePictureUrl: user.profilePictureUrl };
    },
  );
};
