/**
 * Which model answers the next turn. Pure, like the breaker's `admit`: the caller reads whether
 * the run's own model's breaker admits a call now.
 *
 * - breaker admits (closed, or cooled down so this call is the probe) → the run's model;
 * - breaker refuses and the agent names a fallback → the fallback;
 * - breaker refuses, no fallback → the run's model, whose call fails fast with `Agent.CircuitOpen`
 *   and the state machine waits out the cooldown.
 */
export declare function modelForTurn(model: string, fallback: string | undefined, modelAdmitted: boolean): {
    model: string;
    fallback: boolean;
};
