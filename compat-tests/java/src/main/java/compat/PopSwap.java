package compat;

import java.io.BufferedWriter;
import java.io.FileOutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import compat.Main.Ctx;

import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.header.AckMessageRequestHeader;

/**
 * Issue 22: unacknowledged POP messages survive a store swap (driven by compat-tests/swap.sh, cases POP-SW-J2R and
 * POP-SW-R2J; the Java -> Java run is the oracle).
 * <ul>
 * <li>POP-SW-WRITE (first broker): topic POPSW_<run>_t (4 queues), group POPSW_<run>_g in POP mode, 40 messages; a
 * child JVM (POP-SW-CHILD, a POP-mode push consumer, popInvisibleTime {@link #IT}) pops all 40, acks the 20 with an
 * even body index (CONSUME_SUCCESS: one ACK_MESSAGE each, answered SUCCESS) and holds the 20 odd ones in its
 * listener; then it is killed with SIGKILL. What was popped (receipts) and acked is saved in the state dir; the
 * driver then stops the broker with SIGTERM.</li>
 * <li>POP-SW-VERIFY (second broker, same store): a new POP consumer of the group gets each of the 20 unacked back
 * exactly once from %RETRY%<group>_<topic> (retry mark 1, reconsumeTimes 1, 1ST_POP_TIME = the first broker's
 * popTime, retry-queue offsets 0..19), none before popTime + invisibleTime and none later than {@link #BOUND_MS}
 * after max(popTime + invisibleTime, consumer start); none of the 20 acked comes back (neither from the topic nor
 * from the retry topic, whose max offset stays 20); 5 messages sent after the swap are delivered once from the
 * topic; consume stats of the group reach diff 0 on the topic (45) and on the retry topic (20).</li>
 * </ul>
 */
final class PopSwap {

    static void register() {
        Main.def("POP-SW-WRITE", "swap", 240, "pop swap: 40 popped by a child JVM, 20 acked, 20 left unacked, child SIGKILLed", PopSwap::write);
        Main.def("POP-SW-CHILD", "tool", 300, "pop swap: POP-SW-WRITE child, pops, acks the even ones, holds the odd ones", PopSwap::child);
        Main.def("POP-SW-VERIFY", "swap", 300, "pop swap: on the second broker the 20 unacked come back once, the acked never", PopSwap::verify);
    }

    static final int N = 40;
    static final int NEW = 5;
    /**
     * popInvisibleTime of the child: long enough that nothing is revived before the swap, and that the second broker
     * is up before it ends even when that is the Java broker (start ~28 s on this box), so "not before popTime +
     * invisibleTime" is a real check in both directions.
     */
    static final long IT = Long.getLong("compat.popsw.invisibleMs", 45_000L);
    /**
     * Latest accepted redelivery, after max(popTime + invisibleTime, consumer start). Java 5.3.3: the revive service
     * re-puts a message ~2 s after its invisible time; an arrival in a V1 retry topic wakes no parked POP, so the
     * consumer gets it when its parked POP (pollTime 15 s) ends: between ~2 and ~17.5 s late, by the phase of the
     * consumer's 15 s polls. Measured (2026-12-02, 2-core shared box, 7 runs): Java -> Java 15.2, 17.8, 2.0, 11.8,
     * 12.8, 6.9, 3.4 s (the consumer started 10-20 s before the invisible time ended, once 4.8 s after it in a run
     * slowed by a build); rmqd -> Java 3.3, 13.2, 5.1, 12.7, 15.8, 18.6 s. rmqd wakes a parked POP when a message
     * reaches the pop retry topic: Java -> rmqd 3.5, 3.6, 4.9, 5.0, 5.0 s. 30 s = the Java worst case + 11 s.
     */
    static final long BOUND_MS = Long.getLong("compat.popsw.boundMs", 30_000L);

    static String topic(Ctx c) {
        return "POPSW_" + c.runId + "_t";
    }

    static String group(Ctx c) {
        return "POPSW_" + c.runId + "_g";
    }

    static Path dir(Ctx c) {
        return Paths.get(c.stateDir, "popsw-" + c.runId);
    }

    /** body index of a message sent by {@link Pop#send} with prefix "popsw" ("popsw body <i>") */
    static int index(MessageExt m) {
        String b = new String(m.getBody(), StandardCharsets.UTF_8);
        Main.check(b.startsWith("popsw body "), "unexpected body '" + b + "'");
        return Integer.parseInt(b.substring("popsw body ".length()));
    }

    // ---------------------------------------------------------------- POP-SW-WRITE
    static String write(Ctx c) throws Exception {
        String topic = topic(c);
        String group = group(c);
        c.createTopic(topic, 4);
        Pop.createGroup(c, group);
        Pop.setPop(c, topic, group);
        DefaultMQProducer p = c.producer(c.name("pg"));
        List<String> ids = Pop.send(p, topic, "popsw", 0, N);
        Path dir = dir(c);
        Files.createDirectories(dir.resolve("home"));
        Path popped = dir.resolve("popped.tsv");
        Path acks = dir.resolve("acks.tsv");
        Files.deleteIfExists(popped);
        Files.deleteIfExists(acks);
        Files.deleteIfExists(dir.resolve("state.tsv"));
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!a.startsWith("-Duser.home=") && !a.startsWith("-Drocketmq.client.localOffsetStoreDir=")) {
                cmd.add(a);
            }
        }
        cmd.add("-Duser.home=" + dir.resolve("home"));
        cmd.add("-Drocketmq.client.localOffsetStoreDir=" + dir.resolve("home").resolve(".rocketmq_offsets"));
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add("compat.Main");
        Collections.addAll(cmd, "--ns", c.ns, "--broker-addr", c.brokerAddr, "--broker-name", c.brokerName,
            "--run-id", c.runId, "--state-dir", c.stateDir, "--only", "POP-SW-CHILD");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("child.out").toFile());
        long tSpawn = System.currentTimeMillis();
        Process child = pb.start();
        c.closers.add(child::destroyForcibly);
        // all 40 popped and the 20 even ones acked (ACK_MESSAGE answered, whatever the code: checked below)
        boolean done = Main.waitFor(() -> Pop.lines(popped).size() >= N && Pop.lines(acks).size() >= N / 2 || !child.isAlive(), 90_000);
        List<String> rows = Pop.lines(popped);
        List<String> ackRows = Pop.lines(acks);
        if (!done || rows.size() < N || ackRows.size() < N / 2) {
            child.destroyForcibly();
            throw new AssertionError("child consumer JVM popped " + rows.size() + " of " + N + " and got " + ackRows.size() + " of " + N / 2
                + " ACK_MESSAGE answers within 90 s (alive=" + child.isAlive() + "); see " + dir.resolve("child.out"));
        }
        long tReady = System.currentTimeMillis();
        child.destroyForcibly(); // SIGKILL: the held 20 are never acked
        child.waitFor(20, TimeUnit.SECONDS);
        long tKill = System.currentTimeMillis();
        Main.check(!child.isAlive(), "child JVM still alive after SIGKILL");
        // uniq -> receipt; "<queueId> <offset>" -> uniq
        Map<String, String[]> ck = new LinkedHashMap<>();
        Map<String, Integer> idx = new HashMap<>();
        Map<String, String> byPos = new HashMap<>();
        long minPt = Long.MAX_VALUE;
        long maxPt = 0;
        for (String r : rows) {
            String[] f = r.split("\t");
            String[] rc = f[2].split(" ");
            Main.check(!ck.containsKey(f[0]), "child got " + f[0] + " twice before the swap");
            Main.check(rc.length == 8 && rc[4].equals("0") && rc[2].equals(Long.toString(IT)),
                "child receipt '" + f[2] + "' (want 8 fields, retry mark 0, invisibleTime " + IT + ")");
            ck.put(f[0], rc);
            idx.put(f[0], Integer.parseInt(f[1]));
            byPos.put(rc[6] + " " + rc[7], f[0]);
            minPt = Math.min(minPt, Long.parseLong(rc[1]));
            maxPt = Math.max(maxPt, Long.parseLong(rc[1]));
        }
        Main.check(ck.keySet().containsAll(ids) && ck.size() == N, "child received other messages than sent: " + Main.first(ck.keySet(), 3));
        Main.check(tKill < minPt + IT - 5_000, "the child was killed " + (tKill - minPt) + " ms after its first pop: too close to the invisible time "
            + IT + " (the swap must happen before anything is revived)");
        TreeSet<Integer> acked = new TreeSet<>();
        Map<String, Integer> bad = new TreeMap<>();
        for (String r : ackRows) {
            String[] f = r.split("\t"); // queueId offset topic code
            if (!f[3].equals("0")) {
                bad.merge(f[3], 1, Integer::sum);
                continue;
            }
            String u = byPos.get(f[0] + " " + f[1]);
            Main.check(u != null && f[2].equals(topic), "ACK_MESSAGE for queue " + f[0] + " offset " + f[1] + " topic " + f[2] + " matches no popped message");
            acked.add(idx.get(u));
        }
        Main.check(bad.isEmpty(), "ACK_MESSAGE answers not SUCCESS (code: count): " + bad);
        TreeSet<Integer> even = new TreeSet<>();
        for (int i = 0; i < N; i += 2) {
            even.add(i);
        }
        Main.check(acked.equals(even), "acked body indexes " + acked + ", want the even ones " + even);
        List<String> state = new ArrayList<>();
        for (Map.Entry<String, String[]> e : ck.entrySet()) {
            int i = idx.get(e.getKey());
            // uniq, body index, popTime, invisibleTime, acked, POP_CK
            state.add(e.getKey() + "\t" + i + "\t" + e.getValue()[1] + "\t" + e.getValue()[2] + "\t" + (i % 2 == 0 ? 1 : 0) + "\t"
                + String.join(" ", e.getValue()) + "\t.");
        }
        Files.write(dir.resolve("state.tsv"), state, StandardCharsets.UTF_8);
        return N + " popped by a child JVM (spawn -> all popped and " + N / 2 + " acked: " + (tReady - tSpawn) + " ms; popTimes span "
            + (maxPt - minPt) + " ms), " + N / 2 + " acked (ACK_MESSAGE SUCCESS), " + N / 2 + " held; SIGKILL " + (tKill - maxPt)
            + " ms after the last pop (invisibleTime " + IT + ")";
    }

    // ---------------------------------------------------------------- POP-SW-CHILD
    /** Records each ACK_MESSAGE answer: queueId, offset, topic, response code. */
    static final class AckLog implements RPCHook {
        final PrintWriter out;

        AckLog(PrintWriter out) {
            this.out = out;
        }

        @Override
        public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
        }

        @Override
        public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
            if (request.getCode() != Pop.ACK_MESSAGE || response == null) {
                return;
            }
            Object h = request.readCustomHeader();
            String q;
            String off;
            String t;
            if (h instanceof AckMessageRequestHeader) {
                AckMessageRequestHeader a = (AckMessageRequestHeader) h;
                q = String.valueOf(a.getQueueId());
                off = String.valueOf(a.getOffset());
                t = a.getTopic();
            } else {
                Map<String, String> x = request.getExtFields();
                q = x.get("queueId");
                off = x.get("offset");
                t = x.get("topic");
            }
            synchronized (out) {
                out.print(q + "\t" + off + "\t" + t + "\t" + response.getCode() + "\t" + System.currentTimeMillis() + "\t.\n");
                out.flush();
            }
        }
    }

    static String child(Ctx c) throws Exception {
        Path dir = dir(c);
        PrintWriter popped = new PrintWriter(new BufferedWriter(new OutputStreamWriter(
            new FileOutputStream(dir.resolve("popped.tsv").toFile(), true), StandardCharsets.UTF_8)));
        PrintWriter acks = new PrintWriter(new BufferedWriter(new OutputStreamWriter(
            new FileOutputStream(dir.resolve("acks.tsv").toFile(), true), StandardCharsets.UTF_8)));
        // 48 threads: the 20 held messages block theirs; the client aborts a request that waited past its invisible time
        Pop.popConsumer(c, group(c), topic(c), IT, 48, new AckLog(acks), (msgs, ctx) -> {
            MessageExt m = msgs.get(0);
            int i = index(m);
            synchronized (popped) {
                popped.print(Main.uniq(m) + "\t" + i + "\t" + m.getProperty(MessageConst.PROPERTY_POP_CK) + "\t"
                    + System.currentTimeMillis() + "\t" + (i % 2 == 0 ? "ack" : "hold") + "\t.\n");
                popped.flush();
            }
            if (i % 2 == 0) {
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            }
            try {
                Thread.sleep(3_600_000); // never acked; killed by POP-SW-WRITE
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return ConsumeConcurrentlyStatus.RECONSUME_LATER;
        });
        Thread.sleep(280_000);
        return "not killed";
    }

    // ---------------------------------------------------------------- POP-SW-VERIFY
    static final class Row {
        String uniq;
        int index;
        long pt;
        long it;
        boolean acked;
    }

    static String verify(Ctx c) throws Exception {
        String topic = topic(c);
        String group = group(c);
        String retry = "%RETRY%" + group + "_" + topic;
        Path st = dir(c).resolve("state.tsv");
        Main.check(Files.exists(st), "no " + st + ": POP-SW-WRITE did not finish on the first broker");
        Map<String, Row> rows = new LinkedHashMap<>();
        long maxDue = 0;
        long minPt = Long.MAX_VALUE;
        for (String l : Pop.lines(st)) {
            String[] f = l.split("\t");
            Row r = new Row();
            r.uniq = f[0];
            r.index = Integer.parseInt(f[1]);
            r.pt = Long.parseLong(f[2]);
            r.it = Long.parseLong(f[3]);
            r.acked = f[4].equals("1");
            rows.put(r.uniq, r);
            maxDue = Math.max(maxDue, r.pt + r.it);
            minPt = Math.min(minPt, r.pt);
        }
        Main.check(rows.size() == N, st + " has " + rows.size() + " rows, want " + N);
        TreeSet<String> unacked = new TreeSet<>();
        for (Row r : rows.values()) {
            if (!r.acked) {
                unacked.add(r.uniq);
            }
        }
        c.waitRoute(topic, 4, 30_000);
        Map<String, List<MessageExt>> got = new ConcurrentHashMap<>();
        Map<String, List<Long>> when = new ConcurrentHashMap<>();
        Pop.Wire wire = new Pop.Wire();
        long tStart = System.currentTimeMillis();
        Main.FIRST_START.set(0);
        Pop.popConsumer(c, group, topic, 60_000, 4, wire, (msgs, ctx) -> {
            Main.FIRST_DELIVERY.compareAndSet(0, System.currentTimeMillis());
            for (MessageExt m : msgs) {
                got.computeIfAbsent(Main.uniq(m), k -> new CopyOnWriteArrayList<>()).add(m);
                when.computeIfAbsent(Main.uniq(m), k -> new CopyOnWriteArrayList<>()).add(System.currentTimeMillis());
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        DefaultMQProducer p = c.producer(c.name("pg"));
        long tSend = System.currentTimeMillis();
        List<String> fresh = Pop.send(p, topic, "popsw", N, N + NEW);
        long due = Math.max(maxDue, tStart);
        List<String> want = new ArrayList<>(unacked);
        want.addAll(fresh);
        long waitMs = Math.max(due + BOUND_MS - System.currentTimeMillis(), 10_000);
        boolean all = wire.await(() -> got.keySet().containsAll(want), waitMs);
        long tAll = System.currentTimeMillis();
        // anything acked that comes back is revived in the same pass as the unacked of its checkpoint: give it one
        // more POP round trip (the client pops again at once after each answer) and a margin
        Thread.sleep(5_000);
        wire.save(c, "consumer");
        String before = "consumer started at last popTime + invisibleTime " + (tStart >= maxDue ? "+" : "") + (tStart - maxDue) + " ms";
        TreeSet<Integer> ackedBack = new TreeSet<>();
        for (Row r : rows.values()) {
            if (r.acked && got.containsKey(r.uniq)) {
                ackedBack.add(r.index);
            }
        }
        if (!all) {
            TreeSet<Integer> missing = new TreeSet<>();
            for (String u : unacked) {
                if (!got.containsKey(u)) {
                    missing.add(rows.get(u).index);
                }
            }
            int freshMissing = 0;
            for (String u : fresh) {
                if (!got.containsKey(u)) {
                    freshMissing++;
                }
            }
            throw new AssertionError("within " + waitMs + " ms (due + " + BOUND_MS + " ms): " + missing.size() + " of " + unacked.size()
                + " unacked never came back (body indexes " + missing + "), " + freshMissing + " of " + NEW + " sent after the swap not delivered"
                + (ackedBack.isEmpty() ? "" : ", acked ones came back: " + ackedBack) + "; " + before + "; " + retryState(c, retry, topic)
                + "; " + wire.summary() + " answers " + new TreeMap<>(wire.answers));
        }
        if (!ackedBack.isEmpty()) {
            MessageExt e = got.get(rows.values().stream().filter(r -> r.acked && got.containsKey(r.uniq)).findFirst().get().uniq).get(0);
            throw new AssertionError("acknowledged before the swap and delivered again on the second broker: body indexes " + ackedBack
                + " (e.g. " + describe(e) + "); " + retryState(c, retry, topic));
        }
        String w = Pop.expectPopWire(wire, topic);
        TreeSet<Integer> dup = new TreeSet<>();
        for (Map.Entry<String, List<MessageExt>> e : got.entrySet()) {
            if (e.getValue().size() > 1) {
                dup.add(index(e.getValue().get(0)));
            }
        }
        if (!dup.isEmpty()) {
            throw new AssertionError("delivered more than once on the second broker: body indexes " + dup + "; " + retryState(c, retry, topic));
        }
        Main.check(got.size() == unacked.size() + NEW, "received " + got.size() + " distinct messages, want " + (unacked.size() + NEW)
            + " (the " + unacked.size() + " unacked + " + NEW + " new)");
        long minLate = Long.MAX_VALUE;
        long maxLate = Long.MIN_VALUE;
        List<MessageExt> revived = new ArrayList<>();
        for (String u : unacked) {
            Row r = rows.get(u);
            MessageExt m = got.get(u).get(0);
            String id = "body " + r.index + " (" + u + ")";
            Pop.checkReceipt(c, m, topic, "1", 60_000, tStart);
            Main.check(m.getReconsumeTimes() == 1, id + ": reconsumeTimes " + m.getReconsumeTimes() + " after one revive, want 1");
            Main.check(Long.toString(r.pt).equals(m.getProperty(MessageConst.PROPERTY_FIRST_POP_TIME)),
                id + ": 1ST_POP_TIME " + m.getProperty(MessageConst.PROPERTY_FIRST_POP_TIME) + ", want the first broker's popTime " + r.pt);
            Main.check(Main.eq(m.getTags(), "popTag") && Main.eq(m.getKeys(), "popsw-" + r.index)
                && Main.eq(m.getUserProperty("seq"), Integer.toString(r.index)), id + ": tags/keys/seq " + m.getTags() + "/" + m.getKeys() + "/" + m.getUserProperty("seq"));
            long back = when.get(u).get(0);
            Main.check(back >= r.pt + r.it - 50, id + ": back " + (back - r.pt) + " ms after its pop, before its invisibleTime " + r.it + " ms");
            long late = back - Math.max(r.pt + r.it, tStart);
            Main.check(late <= BOUND_MS, id + ": back " + late + " ms after max(popTime + invisibleTime, consumer start), bound " + BOUND_MS + " ms");
            minLate = Math.min(minLate, late);
            maxLate = Math.max(maxLate, late);
            revived.add(m);
        }
        Pop.checkRetryOffsets(revived, unacked.size());
        long maxRetry = maxOffset(c, retry, 0);
        Main.check(maxRetry == unacked.size(), retry + " max offset " + maxRetry + ", want " + unacked.size() + " (only the unacked revived)");
        long freshMax = 0;
        for (String u : fresh) {
            MessageExt m = got.get(u).get(0);
            Pop.checkReceipt(c, m, topic, "0", 60_000, tStart);
            Main.check(m.getReconsumeTimes() == 0, "new message body " + index(m) + " reconsumeTimes " + m.getReconsumeTimes());
            freshMax = Math.max(freshMax, when.get(u).get(0) - tSend);
        }
        String done = unacked.size() + " unacked back once from " + retry + " (offsets 0.." + (unacked.size() - 1)
            + ", reconsumeTimes 1, 1ST_POP_TIME = first broker's popTime) " + minLate + ".." + maxLate
            + " ms after max(popTime + invisibleTime, consumer start) (" + before + "); 0 of " + (N - unacked.size())
            + " acked back; " + NEW + " new delivered within " + freshMax + " ms of the send; all within " + (tAll - tStart)
            + " ms of the consumer start";
        try {
            String diff = Pop.awaitDiffZero(c, group, topic, 30_000);
            String diffRetry = Pop.awaitDiffZero(c, group, retry, 30_000);
            return done + "; " + w + "; consume stats topic " + diff + ", retry " + diffRetry;
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + " (the rest passed: " + done + ")");
        }
    }

    static String describe(MessageExt m) {
        return "topic " + m.getTopic() + " queue " + m.getQueueId() + " offset " + m.getQueueOffset() + " reconsumeTimes " + m.getReconsumeTimes()
            + " POP_CK '" + m.getProperty(MessageConst.PROPERTY_POP_CK) + "' 1ST_POP_TIME " + m.getProperty(MessageConst.PROPERTY_FIRST_POP_TIME);
    }

    /**
     * GET_MAX_OFFSET straight to the broker under test: DefaultMQAdminExt.maxOffset goes by the topic's route, and the
     * Java broker registers a pop retry topic its revive service created at its next registration (up to 30 s later).
     */
    static long maxOffset(Ctx c, String topic, int queueId) throws Exception {
        return c.admin().getDefaultMQAdminExtImpl().getMqClientInstance().getMQClientAPIImpl()
            .getMaxOffset(c.brokerAddr, new MessageQueue(topic, c.brokerName, queueId), 5_000);
    }

    /** broker offsets of the retry topic and the topic, for failure details */
    static String retryState(Ctx c, String retry, String topic) {
        StringBuilder b = new StringBuilder();
        try {
            b.append(retry).append(" max offset ").append(maxOffset(c, retry, 0));
        } catch (Exception e) {
            b.append(retry).append(": ").append(e.getMessage());
        }
        try {
            long sum = 0;
            for (int q = 0; q < 4; q++) {
                sum += maxOffset(c, topic, q);
            }
            b.append(", ").append(topic).append(" max offsets total ").append(sum);
        } catch (Exception e) {
            b.append(", ").append(topic).append(": ").append(e.getMessage());
        }
        return b.toString();
    }

    private PopSwap() {
    }
}
