// What every challenge solver does (HTTP-01 embedded or in Kubernetes, webroot, exec hooks,
// DNS-01 providers, webhooks), apart from the challenge controller that picks one: solvers
// depend on this contract, never on the controller.

export interface CheckResult {
  ok: boolean;
  reason?: string;
}

export interface ChallengeSolver {
  present(): Promise<void>;
  /**
   * Serves again what a restart lost, without side effects elsewhere: the embedded HTTP-01
   * responder keeps tokens in memory, so a Challenge presented or accepted by an earlier process
   * must be given back to it before the CA looks. Absent for solvers whose state outlives us.
   */
  restore?(): Promise<void>;
  check(): Promise<CheckResult>;
  cleanUp(): Promise<void>;
}
