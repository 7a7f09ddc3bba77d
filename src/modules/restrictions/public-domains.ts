/**
 * Free-mail and consumer email domains refused by `blockPublicDomains`. A fixed list of the widely used providers
 * (not exhaustive; a vendor blocks further domains with an ordinary BLOCK entry). Subdomains match too.
 */
export const PUBLIC_EMAIL_DOMAINS: ReadonlySet<string> = new Set([
  'gmail.com', 'googlemail.com', 'yahoo.com', 'yahoo.co.uk', 'yahoo.co.jp', 'yahoo.fr', 'yahoo.de', 'ymail.com', 'rocketmail.com',
  'outlook.com', 'hotmail.com', 'hotmail.co.uk', 'hotmail.fr', 'live.com', 'msn.com', 'passport.com',
  'icloud.com', 'me.com', 'mac.com', 'aol.com', 'aim.com', 'protonmail.com', 'proton.me', 'pm.me', 'tutanota.com', 'tuta.io',
  'gmx.com', 'gmx.de', 'gmx.net', 'web.de', 't-online.de', 'mail.com', 'email.com', 'zoho.com', 'zohomail.com', 'yandex.com',
  'yandex.ru', 'mail.ru', 'inbox.ru', 'list.ru', 'bk.ru', 'qq.com', '163.com', '126.com', 'sina.com', 'naver.com', 'daum.net',
  'hanmail.net', 'rediffmail.com', 'fastmail.com', 'hushmail.com', 'laposte.net', 'orange.fr', 'free.fr', 'libero.it',
  'virgilio.it', 'seznam.cz', 'wp.pl', 'o2.pl', 'interia.pl', 'comcast.net', 'verizon.net', 'att.net', 'sbcglobal.net',
  'bellsouth.net', 'cox.net', 'earthlink.net', 'btinternet.com', 'sky.com', 'mailinator.com', 'guerrillamail.com',
]);
