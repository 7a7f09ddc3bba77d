import type { Queryable } from '../../storage/db.ts';
import * as store from './store.ts';

/** The captcha site key when an enabled policy exists, for the public login box (never the secret). */
export const captchaSiteKey = (q: Queryable) => store.enabledSiteKey(q);
