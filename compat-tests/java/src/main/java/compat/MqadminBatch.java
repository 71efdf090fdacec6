package compat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.apache.rocketmq.tools.command.MQAdminStartup;

/**
 * Runs several real mqadmin commands (MQAdminStartup.main0, as the mqadmin script does) in one JVM, to spare a
 * JVM start per command. stdin: one command a line, "<label>\t<arg>\t<arg>..."; stdout: "=== <label>" before
 * each command's own output. Used by the grpc suite to create its topics and groups.
 */
public final class MqadminBatch {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            String[] f = line.split("\t");
            String[] cmd = new String[f.length - 1];
            System.arraycopy(f, 1, cmd, 0, cmd.length);
            System.out.println();
            System.out.println("=== " + f[0]);
            System.out.flush();
            MQAdminStartup.main0(cmd, null);
            System.out.flush();
        }
        System.exit(0);
    }
}
