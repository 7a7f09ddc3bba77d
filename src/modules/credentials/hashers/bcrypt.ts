import { verify } from '@node-rs/bcrypt';
import type { Hasher } from './types.ts';

const MCF = /^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/;

/** bcrypt modular-crypt strings `$2a$`, `$2b$`, `$2y$` (wire.md section 8), stored as imported; no config. */
export const bcrypt: Hasher = {
  id: 'bcrypt',
  matches: (stored) => /^\$2[aby]\$/.test(stored),
  async verify(password, stored) {
    if (!MCF.test(stored)) return false;
    try {
      return await verify(password, stored); // the library compares in constant time
    } catch {
      return false;
    }
  },
  imports: {
    type: 'bcrypt',
    required: [],
    check: (_config, hash) =>
      MCF.test(hash)
        ? undefined
        : 'passwordHash must be a bcrypt string $2a$, $2b$ or $2y$ with cost 04-31, a 22-character salt and a 31-character hash',
    store: (hash) => hash,
  },
};
