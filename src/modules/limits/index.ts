export { createLimitsService, type LimitsService, type Limited, type RateLimiter, type Rule } from './service.ts';
export { limitsPurgeRules } from './purge.ts';
