// The account row shapes, shared by the store and by modules that read accounts (through index.ts).

export interface TenantRow {
  tenant_id: string;
  id: string;
  name: string;
  alias: string | null;
  status: string | null;
  website: string | null;
  application_url: string | null;
  login_url: string | null;
  logo: string | null;
  logo_url: string | null;
  address: string | null;
  timezone: string | null;
  date_format: string | null;
  time_format: string | null;
  currency: string | null;
  creator_name: string | null;
  creator_email: string | null;
  metadata: Record<string, unknown>;
  is_reseller: boolean;
  sub_account_access_type: 'defaultOff' | 'defaultOn' | 'alwaysOn';
  parent_tenant_id: string | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

/** A new account as rows for `insertAccounts`: every column given, so a reactivation keeps nothing stale. */
export interface NewTenant {
  tenant_id: string;
  id: string;
  parent_tenant_id: string | null;
  metadata: Record<string, unknown>;
  is_reseller: boolean;
  [column: string]: unknown;
}
