import type { SigninPagesDeps } from './deps.ts';
import type { Methods } from './views.ts';

/** The sign-in methods the environment enables (the login box's public configuration, the API's own rules). */
export async function methodsOf(deps: SigninPagesDeps): Promise<Methods> {
  const c = await deps.environment.loginBox.publicConfig();
  return { ...c.signIn, allowSignups: c.allowSignups, captcha: c.captcha.enabled };
}
