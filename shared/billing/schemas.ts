/** Request schemas of the /billing endpoints (zod/mini). */
import * as z from 'zod/mini';

/** Only the paid plans can be bought; FREE (or anything else) is a 400 on `plan`. */
export const CheckoutBody = z.strictObject({
  plan: z.enum(['GROWTH', 'SCALE'], 'plan must be GROWTH or SCALE (FREE needs no checkout).'),
});
export type CheckoutBody = z.infer<typeof CheckoutBody>;
