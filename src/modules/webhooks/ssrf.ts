import { AppError } from '../../http/errors.ts';
import { parseOutboundUrl, refusedAddressOf } from '../../lib/outbound.ts';

/**
 * Webhook URLs go through the shared outbound address guard (src/lib/outbound.ts): unless
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS is on (the default outside production), a webhook may only reach public addresses,
 * checked when the URL is saved (400 naming the field) and again at every connection (deliver.ts).
 */
export { guardedLookup, isPrivateAddress } from '../../lib/outbound.ts';

/** Throws WEBHOOK_URL_REFUSED naming `field` when the URL is not http(s) or (guard on) its host is or resolves to a refused address. */
export async function assertWebhookUrl(url: string, allowPrivate: boolean, field = 'body.url'): Promise<void> {
  const u = parseOutboundUrl(url, field);
  if (allowPrivate) return;
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const bad = await refusedAddressOf(u);
  if (bad === null)
    throw new AppError(
      'WEBHOOK_URL_REFUSED',
      `${field} host ${host} does not resolve, so it cannot be checked against private networks`,
    );
  if (bad)
    throw new AppError(
      'WEBHOOK_URL_REFUSED',
      `${field} host ${host} is or resolves to ${bad}, a loopback, private, link-local or metadata address (set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true to allow)`,
    );
}
