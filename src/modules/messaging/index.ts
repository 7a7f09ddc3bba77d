export {
  createMessagingService,
  DELIVER_JOB,
  TWILIO_BASE_URL,
  type MessagingService,
  type MessagingDeps,
  type EmailRequest,
  type SmsRequest,
} from './service.ts';
export { messagingRoutes } from './routes.ts';
export { EMAIL_TEMPLATE_TYPES, SMS_TEMPLATE_TYPES, type EmailTemplateType, type SmsTemplateType } from './templates.ts';
// What other modules' statements read of the delivery setup, as SQL expressions (lookups.ts).
export { deliveryFactsSql } from './lookups.ts';
