export {
  createAccountSettingsService,
  normalizeTimeZone,
  settingsValues,
  toSettings,
  toPublicSettings,
  type AccountSettingsService,
  type AccountSettingsDeps,
} from './service.ts';
export { accountSettingsRoutes } from './routes.ts';
export { AccountSettings, PublicSettings, UpdateSettings } from './schema.ts';
