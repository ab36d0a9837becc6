/** The webhook secret every recipe under test is configured with (test/support/webhook-contract.ts). */
export const CONTRACT_SECRET = 'framework-recipe-secret-0123456789';
