// The closed vocabularies of the inventory: providers, severities and their ranks, lifecycle and operational states.

export const providers = ['AWS', 'Azure', 'GCP', 'Kubernetes'] as const;
export type Provider = (typeof providers)[number];

/** Severities of risks, and the levels the asset list filters counts and secrets by. */
export const riskSeverities = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW'] as const;
export type RiskSeverity = (typeof riskSeverities)[number];

/** Severities of vulnerability findings: the risk severities plus two that never count towards an asset. */
export const findingSeverities = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW', 'INFORMATIONAL', 'UNKNOWN'] as const;
export type FindingSeverity = (typeof findingSeverities)[number];

/** A finding's `severityLevelValue`: its severity's rank, the default sort key of the vulnerability list. */
export const severityLevelValues: Readonly<Record<FindingSeverity, number>> = {
  CRITICAL: 5,
  HIGH: 4,
  MEDIUM: 3,
  LOW: 2,
  INFORMATIONAL: 1,
  UNKNOWN: 0,
};

export const lifecycleStates = ['DISMISSED_ACCEPTED', 'DISMISSED_NOT_A_RISK', 'OPEN'] as const;
export type LifecycleState = (typeof lifecycleStates)[number];

export const operationalStates = ['active', 'inactive'] as const;
export type OperationalState = (typeof operationalStates)[number];

/** The only resource type that has an operational state; the operationalStates filter matches nothing else. */
export const OPERATIONAL_STATE_TYPES: readonly string[] = ['AWS::EC2::Instance'];
