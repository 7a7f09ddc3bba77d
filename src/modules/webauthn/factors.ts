import type { Queryable } from '../../storage/db.ts';
import type { WebAuthnFactors } from '../mfa/index.ts';
import * as store from './store.ts';
import type { DeviceType } from './store.ts';

/** The users' credentials as the mfa module sees its WebAuthn factors (src/context.ts passes this to it). */
export const webauthnFactors: WebAuthnFactors = {
  async devices(q: Queryable, userId: string, types: DeviceType[]) {
    return (await store.credentialsOf(q, userId, types)).map((c) => ({
      id: c.id,
      deviceType: c.device_type,
      name: c.name,
    }));
  },
  removeAll: (q: Queryable, userId: string) => store.deleteAllOf(q, userId),
};
