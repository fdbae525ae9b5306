"""Control laws, gains, references and the control loop (ROS-free).  The laws ``make_law``
builds are named in one registry, ``laws.LAW_CLASSES`` (the force laws by name: importing the
package registers nothing)."""
