import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { keyFromString, randomSecret } from '../../lib/crypto.ts';

/**
 * The key-encryption key that seals private signing keys in the database. From GATEHOUSE_ENCRYPTION_KEY when set;
 * otherwise generated once into DATA_DIR/encryption.key (mode 0600). Losing it means rotating all signing keys.
 */
export function loadKeyEncryptionKey(configured: string | undefined, dataDir: string): Buffer {
  if (configured) return keyFromString(configured);
  const file = join(dataDir, 'encryption.key');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, randomSecret(32) + '\n', { mode: 0o600, flag: 'wx' });
  }
  return keyFromString(readFileSync(file, 'utf8').trim());
}
