import { Type } from 'typebox';

/** Schemas of the phone-number routes (phones.routes.ts) and of their older names (user-phone.routes.ts). */
export const PHONE = Type.String({
  pattern: '^\\+[1-9](?:-?\\d){5,13}$',
  maxLength: 32,
  description: 'leading plus, country code, no spaces (E.164)',
});
export const PhoneNumber = Type.Object({
  id: Type.String(),
  userId: Type.String(),
  phoneNumber: Type.String(),
  verified: Type.Boolean(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export const DeleteAnswer = Type.Object({
  otcToken: Type.Optional(Type.String()),
  id: Type.String(),
  deleted: Type.Boolean(),
});
export const CodeFields = {
  otcToken: Type.String({ minLength: 1, maxLength: 64 }),
  code: Type.String({ minLength: 1, maxLength: 16 }),
};
export const CodeBody = Type.Object(CodeFields);
