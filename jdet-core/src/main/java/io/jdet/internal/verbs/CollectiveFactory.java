package io.jdet.internal.verbs;

import io.jdet.Collective;
import io.jdet.CollectiveTuning;

/**
 * Makes a collective group on a protection domain. The layer above verbs ({@code io.jdet.internal.collective})
 * registers itself with the device through this, so that verbs need not know it.
 */
@FunctionalInterface
public interface CollectiveFactory {
    /**
     * Makes a group whose work completes on a completion queue.
     *
     * @param pd     the protection domain that owns it
     * @param cq     its completion queue, checked open and of the same NIC
     * @param tuning the device's collective settings
     * @return the group, not yet joined
     */
    Collective create(PdImpl pd, CqImpl cq, CollectiveTuning tuning);
}
