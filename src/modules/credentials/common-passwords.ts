/**
 * The 10,000 most common passwords, for `blockPwnedPasswords`.
 *
 * Source: the npm package `@zxcvbn-ts/language-common` (MIT, the zxcvbn-ts project's maintained dictionaries), its
 * `dictionary['passwords-common']`: a frequency-ranked list of leaked passwords whose head is the well-known
 * "10k most common" list (it starts 123456, password, 12345678, qwerty, … in the same order as SecLists'
 * 10-million-password-list-top-10000). We take its first 10,000 entries. The list is lower-case; passwords are compared
 * lower-cased, so `Password1` counts as the listed `password1`.
 *
 * Loaded lazily (dynamic import on first use, about 30 ms) into one Set shared by the process; a failed load is not
 * cached, so the next call tries again.
 */
export const COMMON_PASSWORD_COUNT = 10_000;

let loading: Promise<ReadonlySet<string>> | undefined;

export function commonPasswords(): Promise<ReadonlySet<string>> {
  loading ??= import('@zxcvbn-ts/language-common')
    .then((m) => {
      const list = m.dictionary['passwords-common'];
      if (!Array.isArray(list) || list.length < COMMON_PASSWORD_COUNT)
        throw new Error('common-password list is missing or short');
      return new Set(list.slice(0, COMMON_PASSWORD_COUNT).map((p) => p.toLowerCase())) as ReadonlySet<string>;
    })
    .catch((err: unknown) => {
      loading = undefined;
      throw err;
    });
  return loading;
}

export async function isCommonPassword(password: string): Promise<boolean> {
  return (await commonPasswords()).has(password.toLowerCase());
}
