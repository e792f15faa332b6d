package io.jdet.internal.cm;

import io.jdet.CompletionQueue;
import io.jdet.ConnectionManager;
import io.jdet.Det;
import io.jdet.ProtectionDomain;
import io.jdet.QpCreate;
import io.jdet.QueuePair;
import io.jdet.internal.verbs.NicImpl;
import io.jdet.testing.Tests;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the connection manager's raw-peer tests start from: a NIC on a fresh fabric with a domain, a completion
 * queue, an IDLE queue pair and its connection manager, and a {@link CmRawPeer} aimed at it; each test ends with the
 * engine healthy ({@link Tests#assertEngineHealthy}).
 */
abstract class CmVictimCase {
    protected Det det;
    /** The name the NIC was opened on (a fresh fabric), for tests that open more NICs on it. */
    protected String fabric;
    protected NicImpl nic;
    protected CompletionQueue cq;
    protected ProtectionDomain pd;
    protected QueuePair qp;
    protected ConnectionManager cm;
    protected CmRawPeer raw;

    /** @return the tag of the test's fabric names */
    protected abstract String fabricTag();

    @BeforeEach
    void openVictim() {
        det = Det.open();
        fabric = Tests.uniqueFabric(fabricTag());
        nic = (NicImpl) det.openNic(fabric, null);
        pd = nic.allocPd();
        cq = nic.createCq(16, null);
        qp = pd.createQp(QpCreate.of(cq, 4, 1));
        cm = nic.connectionManager();
        raw = new CmRawPeer(nic.address());
    }

    @AfterEach
    void closeVictim() {
        try {
            Tests.assertEngineHealthy(nic);
        } finally {
            raw.close();
            det.close();
        }
    }
}
