// The ACME controllers of one controller set, sharing one account registry and one HTTP-01 responder.
import type { ControllerContext, ControllerSpec } from '../context.ts';
import type { AcmeClientOptions } from '../../acme/client.ts';
import { createAcmeRuntime } from './runtime.ts';
import { acmeIssuerController } from './account/controller.ts';
import { acmeRequestController } from './requests/controller.ts';
import { orderController } from './orders/controller.ts';
import { challengeController, challengeSchedulerController } from './challenges/controller.ts';
import { ariController } from '../certificates/renewal/ari-controller.ts';
import { revocationController } from './revocation/controller.ts';

export function acmeControllers(ctx: ControllerContext, clientOptions?: Partial<AcmeClientOptions>): ControllerSpec[] {
  const rt = createAcmeRuntime(ctx, clientOptions);
  return [
    { ...acmeIssuerController(ctx, rt, false), stop: () => rt.close() },
    acmeIssuerController(ctx, rt, true),
    acmeRequestController(ctx),
    orderController(ctx, rt),
    challengeSchedulerController(ctx),
    challengeController(ctx, rt),
    ariController(ctx, rt),
    revocationController(ctx, rt),
  ];
}
