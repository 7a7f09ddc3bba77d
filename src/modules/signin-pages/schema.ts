import { type TProperties, Type } from 'typebox';

const Str = (max: number) => Type.Optional(Type.String({ maxLength: max }));

/** What every page form carries besides its own fields: the CSRF token, returnTo and a captcha provider's token. */
const formFields = {
  _csrf: Str(512),
  returnTo: Str(2000),
  'g-recaptcha-response': Str(4096),
  'h-captcha-response': Str(4096),
  'cf-turnstile-response': Str(4096),
};

/** A form body: its own fields plus the common ones (all strings: an HTML form sends nothing else). */
export const Form = <P extends TProperties>(props: P) => Type.Object({ ...formFields, ...props });

export const Email = Type.String({ minLength: 1, maxLength: 320 });
export const Password = Type.String({ minLength: 1, maxLength: 1024 });
export const Token = Type.String({ minLength: 1, maxLength: 512 });
export const UserId = Type.String({ minLength: 1, maxLength: 64 });

/** GET /account/login and the other entry pages. */
export const LoginQuery = Type.Object({
  returnTo: Str(2000),
  login_hint: Str(320),
  prompt: Str(64),
  ui_locales: Str(100),
});

/** The query of an emailed link (userId and token; unlock and magic links carry the token alone). */
export const LinkQuery = Type.Object({
  userId: Str(64),
  token: Str(512),
  returnTo: Str(2000),
  ui_locales: Str(100),
});
