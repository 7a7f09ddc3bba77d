import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/harness.ts';
import { account, user } from '../fixtures/builders.ts';

// Needs the module wired: `approvalFlows` in src/context.ts and `approvalFlowsRoutes` in src/routes.ts.
let t: TestApp;
let vendor: string;
const A = '/identity/resources/approval-flows/v1';
const TENANT = 'af-acme';
const ids: Record<string, string> = {};

const as = (tenantId?: string, userId?: string): Record<string, string> => ({
  ...(tenantId ? { 'gatehouse-tenant-id': tenantId } : {}),
  ...(userId ? { 'gatehouse-user-id': userId } : {}),
});
const call = (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) =>
  t.call(method, url, { token: vendor, body, headers });

const flowBody = (over: Record<string, unknown> = {}) => ({
  name: 'Wire transfer',
  description: 'Large payments',
  channels: { email: true, sms: false },
  configuration: { notifyOnDecisions: true },
  steps: [
    { approverSelector: { type: 'users', userIds: [ids.ann, ids.ben] }, order: 1 },
    { approverSelector: { type: 'roles', roleKeys: ['af-approver'] }, order: 2 },
  ],
  ...over,
});

async function createFlow(over: Record<string, unknown> = {}, tenantId?: string) {
  const r = await call('POST', A, flowBody(over), as(tenantId));
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}
async function execute(flowId: string, body: unknown = { executionData: { amount: 5000 } }, requester = ids.req) {
  const r = await call('POST', `${A}/${flowId}/execute`, body, as(TENANT, requester));
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.status, 'pending');
  return r.body.approvalFlowExecutionId as string;
}
const act = (approvalFlowExecutionId: string, approvalFlowStepId: string, approverId: string, approved = true) =>
  call('POST', `${A}/approver-action`, { approved, approvalFlowExecutionId, approverId, approvalFlowStepId });
const execution = (id: string) => call('GET', `${A}/executions/${id}`);

before(async () => {
  t = await startTestApp();
  vendor = await t.vendorToken();
  await account(t, { id: TENANT });
  const role = await call('POST', '/identity/resources/roles/v1', [{ key: 'af-approver', name: 'Approver', level: 5 }]);
  assert.equal(role.status, 201, JSON.stringify(role.body));
  ids.req = (await user(t, TENANT, { email: 'req@acme.test' })).id;
  ids.ann = (await user(t, TENANT, { email: 'ann@acme.test' })).id;
  ids.ben = (await user(t, TENANT, { email: 'ben@acme.test' })).id;
  ids.cat = (await user(t, TENANT, { email: 'cat@acme.test', roleIds: [role.body[0].id] })).id;
});
after(async () => t?.close());

describe('approval flow CRUD', () => {
  test('create, list, get, patch and delete; the tenant header scopes a flow', async () => {
    const flow = await createFlow({}, TENANT);
    assert.equal(flow.tenantId, TENANT);
    assert.equal(flow.vendorId, t.ctx.environment.id);
    assert.equal(flow.isActive, true);
    assert.equal(flow.steps.length, 2);
    assert.deepEqual(
      flow.steps.map((s: any) => [s.order, s.requiredApprovals]),
      [
        [1, 1],
        [2, 1],
      ],
    );
    assert.ok(flow.steps.every((s: any) => typeof s.id === 'string' && s.id.length > 0));

    const other = await call('GET', `${A}/${flow.id}`, undefined, as('af-other'));
    assert.equal(other.status, 404);
    assert.equal(other.body.errorCode, 'GH-68001');
    const list = await call('GET', A, undefined, as(TENANT));
    assert.ok(list.body.items.some((f: any) => f.id === flow.id));
    assert.ok(!(await call('GET', A, undefined, as('af-other'))).body.items.some((f: any) => f.id === flow.id));

    const patched = await call('PATCH', `${A}/${flow.id}`, { name: 'Renamed', isActive: false }, as(TENANT));
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.name, 'Renamed');
    assert.equal(patched.body.isActive, false);
    assert.equal(patched.body.description, 'Large payments');
    assert.equal((await call('GET', `${A}/${flow.id}`)).body.name, 'Renamed');

    const inactive = await call('POST', `${A}/${flow.id}/execute`, {}, as(TENANT, ids.req));
    assert.equal(inactive.status, 409);

    assert.equal((await call('DELETE', `${A}/${flow.id}`, undefined, as(TENANT))).status, 204);
    assert.equal((await call('GET', `${A}/${flow.id}`)).status, 404);
  });

  test('bad input is a 400 naming the field, and creates nothing', async () => {
    const before = (await call('GET', A)).body.items.length;
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ name: '' }, /name/],
      [{ steps: [] }, /steps/],
      [{ steps: [{ approverSelector: { type: 'users', userIds: [] } }] }, /userIds/],
      [{ steps: [{ approverSelector: { type: 'roles' } }] }, /roleKeys/],
      [{ steps: [{ approverSelector: { type: 'users', userIds: ['a'] }, requiredApprovals: 2 }] }, /requiredApprovals/],
      [
        {
          steps: [
            { approverSelector: { type: 'users', userIds: ['a'] }, order: 1 },
            { approverSelector: { type: 'users', userIds: ['b'] }, order: 1 },
          ],
        },
        /order/,
      ],
      [{ configuration: { webhookUrl: 'ftp://x' } }, /webhookUrl/],
      [{ configuration: { timeoutMinutes: -1 } }, /timeoutMinutes/],
      [{ channels: { email: true } }, /sms/],
    ];
    for (const [over, field] of cases) {
      const r = await call('POST', A, flowBody(over));
      assert.equal(r.status, 400, `${JSON.stringify(over)} → ${r.status} ${JSON.stringify(r.body)}`);
      assert.match(r.body.errors.join(' '), field, JSON.stringify(r.body));
    }
    assert.equal((await call('GET', A)).body.items.length, before);
    assert.equal((await call('PATCH', `${A}/00000000-0000-4000-8000-000000000000`, { name: 'x' })).status, 404);
    assert.equal((await call('GET', `${A}/not-a-uuid`)).status, 400);
    assert.equal((await t.call('GET', A)).status, 401);
  });
});

describe('executions', () => {
  let flow: any;
  before(async () => {
    flow = await createFlow();
  });

  test('execute needs the requester header and a known user', async () => {
    const noUser = await call('POST', `${A}/${flow.id}/execute`, {}, as(TENANT));
    assert.equal(noUser.status, 400);
    assert.match(noUser.body.errors.join(' '), /gatehouse-user-id/);
    assert.equal((await call('POST', `${A}/${flow.id}/execute`, {}, as(TENANT, 'nobody'))).status, 404);
    assert.equal(
      (await call('POST', `${A}/${flow.id}/execute`, { webhookUrl: 'not a url' }, as(TENANT, ids.req))).status,
      400,
    );
  });

  test('an approval chain across two steps ends approved; wrong approvers get 403, repeats 409', async () => {
    const id = await execute(flow.id, {
      executionData: { amount: 5000 },
      webhookUrl: 'https://hooks.example.test/approval',
    });
    const [s1, s2] = flow.steps.map((s: any) => s.id);
    assert.equal((await execution(id)).body.currentStepId, s1);

    const wrong = await act(id, s1, ids.cat);
    assert.equal(wrong.status, 403);
    assert.equal(wrong.body.errorCode, 'GH-68003');
    assert.equal((await act(id, s1, ids.req)).status, 403, 'the requester may not approve their own request');
    assert.equal((await act(id, s2, ids.cat)).status, 409, 'step 2 is not open before step 1 is approved');

    const first = await act(id, s1, ids.ann);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(first.body, { approvalFlowExecutionId: id, status: 'pending', currentStepId: s2 });
    assert.equal((await act(id, s1, ids.ann)).status, 409, 'a repeated action');
    assert.equal((await act(id, s1, ids.ben)).status, 409, 'step 1 is already approved');
    assert.equal((await act(id, s2, ids.ann)).status, 403, 'ann holds no approver role');

    const second = await act(id, s2, ids.cat);
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.deepEqual(second.body, { approvalFlowExecutionId: id, status: 'approved' });
    const e = await execution(id);
    assert.equal(e.body.status, 'approved');
    assert.equal(e.body.currentStepId, null);
    assert.ok(e.body.completedAt);
    assert.deepEqual(
      e.body.steps.map((s: any) => s.actions.map((a: any) => [a.approverId, a.approved])),
      [[[ids.ann, true]], [[ids.cat, true]]],
    );
    assert.equal((await act(id, s2, ids.cat)).status, 409);
  });

  test('the approval events are written: requested per step, completed once', async () => {
    const id = await execute(flow.id, { executionData: { amount: 1 }, webhookUrl: 'https://hooks.example.test/a' });
    await act(id, flow.steps[0].id, ids.ben);
    await act(id, flow.steps[1].id, ids.cat);
    const { rows } = await t.db.query<{ event_key: string; data: any }>(
      `SELECT event_key, data FROM events WHERE entity_id = $1 ORDER BY created_at, event_key`,
      [id],
    );
    assert.deepEqual(
      rows.map((r) => r.event_key),
      ['approval.requested', 'approval.requested', 'approval.completed'],
    );
    assert.equal(rows[2].data.status, 'approved');
    assert.equal(rows[2].data.webhookUrl, 'https://hooks.example.test/a');
  });

  test('a rejection ends the execution rejected', async () => {
    const id = await execute(flow.id);
    const r = await act(id, flow.steps[0].id, ids.ben, false);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, 'rejected');
    assert.equal((await execution(id)).body.status, 'rejected');
    assert.equal((await act(id, flow.steps[0].id, ids.ann)).status, 409);
  });

  test('execution data only for an approver of that step', async () => {
    const id = await execute(flow.id, { executionData: { amount: 42, currency: 'EUR' } });
    const q = (approverId: string, stepId: string) =>
      call(
        'GET',
        `${A}/execution-data?approvalFlowExecutionId=${id}&approverId=${approverId}&approvalFlowStepId=${stepId}`,
      );
    const ok = await q(ids.ann, flow.steps[0].id);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.approvalFlowName, 'Wire transfer');
    assert.equal(ok.body.approvalFlowDescription, 'Large payments');
    assert.equal(ok.body.requester, 'req@acme.test');
    assert.deepEqual(ok.body.executionData, { amount: 42, currency: 'EUR' });
    assert.ok(!Number.isNaN(Date.parse(ok.body.approvalFlowRequestDate)));
    assert.equal((await q(ids.cat, flow.steps[1].id)).status, 200, 'a role holder of step 2');
    assert.equal((await q(ids.cat, flow.steps[0].id)).status, 404);
    assert.equal((await q(ids.ann, flow.steps[1].id)).status, 404);
    assert.equal((await q(ids.req, flow.steps[0].id)).status, 404);
    const userToken = await t.userToken({ sub: ids.ben, tenantId: TENANT });
    const asOther = await t.call(
      'GET',
      `${A}/execution-data?approvalFlowExecutionId=${id}&approverId=${ids.ann}&approvalFlowStepId=${flow.steps[0].id}`,
      { token: userToken },
    );
    assert.equal(asOther.status, 404, 'a user token reads only as its own user');
    assert.equal((await call('GET', `${A}/execution-data?approvalFlowExecutionId=${id}`)).status, 400);
  });

  test('step-up runs the active flow marked isStepUp', async () => {
    const marked = await createFlow(
      { name: 'Step-up', isStepUp: true, steps: [{ approverSelector: { type: 'users', userIds: [ids.ann] } }] },
      TENANT,
    );
    const r = await call('POST', `${A}/step-up/execute`, { executionData: { reason: 'export' } }, as(TENANT, ids.req));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((await execution(r.body.approvalFlowExecutionId)).body.approvalFlowId, marked.id);
    await call('PATCH', `${A}/${marked.id}`, { isActive: false }, as(TENANT));
  });
});

describe('deadlines (evaluated when the execution is read or acted on)', () => {
  // Executions are started, then their start is moved into the past: no waiting, no timers.
  const age = (id: string, minutes: number) =>
    t.db.query(
      `UPDATE approval_flow_executions SET created_at = now() - make_interval(mins => $2::int) WHERE id = $1`,
      [id, minutes],
    );

  test('past timeoutMinutes an execution reads as expired and takes no action', async () => {
    const flow = await createFlow({ configuration: { timeoutMinutes: 60 } });
    const id = await execute(flow.id);
    await age(id, 30);
    assert.equal((await execution(id)).body.status, 'pending');
    await age(id, 61);
    assert.equal((await execution(id)).body.status, 'expired');
    const r = await act(id, flow.steps[0].id, ids.ann);
    assert.equal(r.status, 409);
    assert.match(r.body.errors.join(' '), /expired/);
  });

  test('past autoApproveInMinutes an execution reads as approved; the earlier deadline wins', async () => {
    const flow = await createFlow({ configuration: { autoApproveInMinutes: 10, timeoutMinutes: 60 } });
    const id = await execute(flow.id);
    await age(id, 90);
    const r = await act(id, flow.steps[0].id, ids.ann);
    assert.equal(r.status, 409);
    assert.equal((await execution(id)).body.status, 'approved');
  });
});
