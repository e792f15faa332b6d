package io.jdet.collective;

import io.jdet.Configuration;
import io.jdet.Errno;
import io.jdet.WcType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static io.jdet.testing.Tests.assertErrno;

/**
 * ProtectionDomain.createCollective: "Its internal queue pairs and regions live in this domain, so the domain
 * cannot be deallocated until the group is closed." A group not yet joined held nothing in the domain: the domain
 * was deallocated under it, and its join then failed (LOCAL_OP_ERR here, RETRY_EXCEEDED after the whole collective
 * timeout at every other member).
 */
@Timeout(30)
class CollectiveDomainTest {

    @Test
    void aDomainWithAGroupCannotBeDeallocatedUntilTheGroupCloses() {
        try (Group g = new Group(2, new Configuration())) {
            assertErrno(Errno.EBUSY, g.pds[0]::close, "a group not yet joined");
            g.joined(); // the refused close left the domain and the group as they were
            assertErrno(Errno.EBUSY, g.pds[0]::close, "a joined group");
            for (int i = 0; i < 2; i++) {
                g.cos[i].barrier(2, 0);
            }
            g.expectAll(WcType.BARRIER, 0);
            g.cos[0].close();
            g.cos[0].close(); // twice does nothing, and releases the domain once
            g.pds[0].close(); // the group is gone: now the domain may go
        }
    }
}
