package compat;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * Decodes RocketMQ Remoting frames with the REAL Java decoder and prints one JSON line per frame.
 *
 * Input: files given as arguments (or stdin when none / "-"). Each input holds one or more complete frames
 * as they travel on the wire: 4-byte big-endian total length, 4-byte header length|serialize-type, header, body.
 * RemotingCommand.decode(ByteBuffer) expects the frame WITHOUT the leading total-length field (Netty's
 * LengthFieldBasedFrameDecoder strips it), so we split on that field and pass the rest.
 *
 * Output per frame: {"source","index","code","flag","opaque","version","language","remark","extFields",
 * "serializeType","isResponse","isOneway","bodyLength","body"(utf-8) or "bodyBase64"} ; on a decode failure
 * {"source","index","error"} and exit status 1.
 */
public final class DecodeCheck {
    public static void main(String[] args) throws Exception {
        List<String> inputs = new ArrayList<>();
        for (String a : args) {
            inputs.add(a);
        }
        if (inputs.isEmpty()) {
            inputs.add("-");
        }
        int failures = 0;
        for (String in : inputs) {
            byte[] data = "-".equals(in) ? readAll(System.in) : Files.readAllBytes(Paths.get(in));
            ByteBuffer buf = ByteBuffer.wrap(data);
            int index = 0;
            while (buf.remaining() > 0) {
                try {
                    if (buf.remaining() < 4) {
                        throw new IllegalArgumentException(buf.remaining() + " trailing bytes, no length field");
                    }
                    int total = buf.getInt();
                    if (total < 4 || total > buf.remaining()) {
                        throw new IllegalArgumentException("length field " + total + " but " + buf.remaining() + " bytes left");
                    }
                    byte[] frame = new byte[total];
                    buf.get(frame);
                    RemotingCommand cmd = RemotingCommand.decode(ByteBuffer.wrap(frame));
                    System.out.println(toJson(in, index, cmd));
                } catch (Exception e) {
                    failures++;
                    System.out.println("{\"source\":" + q(in) + ",\"index\":" + index + ",\"error\":" + q(String.valueOf(e)) + "}");
                    break;
                }
                index++;
            }
        }
        System.exit(failures == 0 ? 0 : 1);
    }

    static byte[] readAll(InputStream in) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] b = new byte[65536];
        int n;
        while ((n = in.read(b)) > 0) {
            out.write(b, 0, n);
        }
        return out.toByteArray();
    }

    static String toJson(String src, int index, RemotingCommand cmd) {
        StringBuilder b = new StringBuilder("{");
        b.append("\"source\":").append(q(src)).append(",\"index\":").append(index);
        b.append(",\"code\":").append(cmd.getCode());
        b.append(",\"flag\":").append(cmd.getFlag());
        b.append(",\"opaque\":").append(cmd.getOpaque());
        b.append(",\"version\":").append(cmd.getVersion());
        b.append(",\"language\":").append(cmd.getLanguage() == null ? "null" : q(cmd.getLanguage().name()));
        b.append(",\"remark\":").append(cmd.getRemark() == null ? "null" : q(cmd.getRemark()));
        b.append(",\"extFields\":");
        Map<String, String> ext = cmd.getExtFields();
        if (ext == null) {
            b.append("null");
        } else {
            b.append('{');
            boolean first = true;
            for (Map.Entry<String, String> e : new TreeMap<>(ext).entrySet()) {
                if (!first) {
                    b.append(',');
                }
                first = false;
                b.append(q(e.getKey())).append(':').append(e.getValue() == null ? "null" : q(e.getValue()));
            }
            b.append('}');
        }
        b.append(",\"serializeType\":").append(q(String.valueOf(cmd.getSerializeTypeCurrentRPC())));
        b.append(",\"isResponse\":").append(cmd.isResponseType());
        b.append(",\"isOneway\":").append(cmd.isOnewayRPC());
        byte[] body = cmd.getBody();
        b.append(",\"bodyLength\":").append(body == null ? -1 : body.length);
        if (body != null) {
            String text = utf8(body);
            if (text != null) {
                b.append(",\"body\":").append(q(text));
            } else {
                b.append(",\"bodyBase64\":").append(q(Base64.getEncoder().encodeToString(body)));
            }
        }
        return b.append('}').toString();
    }

    static String utf8(byte[] body) {
        try {
            String s = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(body)).toString();
            for (char c : s.toCharArray()) {
                if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') {
                    return null;
                }
            }
            return s;
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    static String q(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') {
                b.append('\\').append(ch);
            } else if (ch < 0x20) {
                b.append(String.format("\\u%04x", (int) ch));
            } else {
                b.append(ch);
            }
        }
        return b.append('"').toString();
    }

    private DecodeCheck() {
    }
}
