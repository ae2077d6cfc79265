#version 330 core
// Blinn-Phong with one directional light (shadow-mapped: one tap of the hardware's bilinear 2x2
// comparison filter), a weak headlight, a checker pattern for planes, and distance fog towards the
// background colour. Kept short: with a software renderer the fragment shader is most of a frame.

in vec3 v_normal;
in vec3 v_to_eye;
in vec3 v_checker;
in vec4 v_color;
in vec3 v_shadow;
in float v_fog;

uniform vec3 u_light_dir;     // direction the light travels (world frame)
uniform vec3 u_background;
uniform sampler2DShadow u_shadow_map;
uniform float u_shadow_on;       // 0: no shadow map bound

out vec4 f_color;

float pow48(float x) {           // x^48 by squaring: cheaper than pow() = exp2(48 log2 x) per pixel
    float x4 = x * x;
    x4 *= x4;
    float x16 = x4 * x4;
    x16 *= x16;
    return x16 * x16 * x16;
}

void main() {
    vec3 n = normalize(gl_FrontFacing ? v_normal : -v_normal);
    vec3 to_eye = normalize(v_to_eye);
    vec3 base = v_color.rgb;
    if (v_checker.z > 0.0) {
        vec2 cell = floor(v_checker.xy / v_checker.z);
        base *= 1.0 - 0.28 * mod(cell.x + cell.y, 2.0);
    }
    vec3 l = -u_light_dir;
    float ndotl = max(dot(n, l), 0.0);
    float shadow = 1.0;
    if (u_shadow_on > 0.5 && all(lessThan(abs(v_shadow - 0.5), vec3(0.5)))) {
        float bias = mix(0.004, 0.0008, ndotl);
        shadow = texture(u_shadow_map, vec3(v_shadow.xy, v_shadow.z - bias));
    }
    float head = max(dot(n, to_eye), 0.0);
    float spec = pow48(max(dot(n, normalize(l + to_eye)), 0.0))
                 * (v_checker.z > 0.0 ? 0.15 : 0.35) * shadow;
    vec3 color = base * (0.28 + 0.62 * ndotl * shadow + 0.18 * head) + vec3(spec);
    f_color = vec4(mix(color, u_background, v_fog), v_color.a);
}
